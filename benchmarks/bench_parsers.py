"""Every protocol parser on its own recorded transcripts, against a bare msgspec decode of the same lines.

    python -m benchmarks.bench_parsers [--lines 60000] [--repeat 5] [--clock cpu|wall]

For each of the six wire protocols the lines the agent wrote (``"dir": "out"``) are taken from the
recorded fixtures under ``tests/fixtures/transcripts/<agent>/<version>/``, encoded back to bytes and
repeated until there are at least ``--lines`` of them. Two pipelines run on the same bytes in the same
process (best of ``--repeat``, the pipelines taking turns):

* ``msgspec decode``  ``msgspec.json.decode(line)`` of each agent line and nothing else (the anchor)
* ``corral``          corral's own decoder (``corral._process._decode.loads``, what every driver
                      uses), then the parser entry point the driver calls for that line

A fresh parser is made for each recorded transcript, as a driver makes one per session, so state such
as open turns and tool calls is exercised the way it is live. What the driver sent (``"dir": "in"``:
a Claude control message, an OpenCode HTTP exchange, a Pi command) goes to the parser's
``feed_sent`` in its recorded place, already an object as it is in the driver, and ``finish()``
(where the parser has one) ends each transcript (ACP: the ids of the prompts we sent, so that only a prompt's response goes
to ``prompt_result``, as in the driver); only the agent's lines are counted and decoded by the anchor. (Without the
sent lines the OpenCode parser follows no session and drops every event, which is not the work a
driver asks of it.) The ratio printed is corral's lines/s over the anchor's; issue 20's goal is
>= 0.7 for every protocol.

Two ceilings are printed beside it, on the same lines and against the same anchor: ``loads`` is
corral's decoder alone (no parser at all), ``1 event`` is the decoder and a parser entry point that
makes one ``TextDelta`` per line and nothing else, through the same ``total()`` wrapper and storable
check every parser has. No parser that makes an event per line can beat the second. ``typed`` is
the floor of the other design decision 041 weighs: the line decoded into a struct of its
discriminators only, its UTF-8 checked, and one event whose ``raw`` is the line's bytes
(``msgspec.Raw``, decoded when read) instead of the decoded object; ``+range`` adds the scan for
numbers out of a float's range that such a pipeline needs (:func:`may_overflow`).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from corral._process._decode import loads
from corral.events import Event, TextDelta
from corral.events._fields import _Clean
from corral.protocols._total import total
from corral.protocols.acp import AcpParser
from corral.protocols.claude_stream_json import ClaudeStreamParser
from corral.protocols.codex_app_server import AppServerParser
from corral.protocols.codex_exec import ExecParser
from corral.protocols.opencode_sse import OpenCodeSseParser
from corral.protocols.pi_rpc import PiRpcParser
from corral.testing.fuzz import acp_feed

ROOT = Path(__file__).resolve().parents[1]
TRANSCRIPTS = ROOT / "tests" / "fixtures" / "transcripts"
GOAL = 0.7
CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}
CLOCK = [time.process_time]
"""What the timings read: this process's CPU time by default (on a shared machine the wall clock
also counts the time other processes hold the core, and swings by 2x between runs)."""


@dataclass(frozen=True)
class Protocol:
    name: str
    agents: tuple[str, ...]
    """Fixture folders recorded on this protocol."""
    make: Callable[[], Any]
    include: Callable[[str], bool] = lambda name: True
    """Which transcript files (by stem) belong to the protocol."""
    entry: Callable[[Any], Callable[[Any], Any]] = lambda parser: parser.feed
    """The parser entry point a driver calls with one decoded line."""


class _AcpDriver:
    """The driver's dispatch of ACP messages (``adapters._acp``): notifications and permission
    requests as ``corral.testing.fuzz.acp_feed`` routes them, and a response to the parser only
    when it answers a ``session/prompt`` we sent (the JSON-RPC client keeps the others)."""

    def __init__(self) -> None:
        self.parser = AcpParser()
        self._prompts: set[Any] = set()

    def feed_sent(self, msg: Any) -> None:
        if type(msg) is dict and msg.get("method") == "session/prompt":
            self._prompts.add(msg.get("id"))

    def feed(self, msg: Any) -> list[Event]:
        if type(msg) is dict and "method" not in msg and msg.get("id") not in self._prompts:
            return []
        return acp_feed(self.parser, msg)


PROTOCOLS = (
    Protocol("claude-stream-json", ("claude", "qwen"), ClaudeStreamParser),
    Protocol(
        "codex-app-server",
        ("codex",),
        AppServerParser,
        include=lambda name: not name.startswith("exec-"),
    ),
    Protocol("codex-exec", ("codex",), ExecParser, include=lambda name: name.startswith("exec-")),
    Protocol("acp", ("gemini", "qwen-acp", "opencode-acp", "hermes"), _AcpDriver),
    Protocol("opencode-sse", ("opencode",), OpenCodeSseParser),
    Protocol("pi-rpc", ("pi",), PiRpcParser),
)

_decode = msgspec.json.decode
_encode = msgspec.json.encode


Run = tuple[Any, list[bytes]]
"""What the driver sent (``None`` at the start of a transcript), and the agent's lines after it."""


@dataclass(frozen=True)
class Transcript:
    lines: list[bytes]
    """The agent's lines, in order (what the anchor decodes)."""
    runs: list[Run]
    """The same lines, split where the driver sent something."""


def transcripts(protocol: Protocol) -> list[Transcript]:
    """Every recorded transcript of ``protocol`` that has agent lines."""
    found: list[Transcript] = []
    for agent in protocol.agents:
        for path in sorted((TRANSCRIPTS / agent).rglob("*.jsonl")):
            if not protocol.include(path.stem):
                continue
            lines: list[bytes] = []
            runs: list[Run] = [(None, [])]
            for raw in path.read_bytes().splitlines():
                entry = _decode(raw)
                if "line" not in entry:
                    continue
                if entry.get("dir") == "out":
                    line = _encode(entry["line"])
                    lines.append(line)
                    runs[-1][1].append(line)
                elif entry.get("dir") == "in":
                    runs.append((entry["line"], []))
            if lines:
                found.append(Transcript(lines, runs))
    return found


def workload(protocol: Protocol, minimum: int) -> list[Transcript]:
    base = transcripts(protocol)
    if not base:
        raise SystemExit(f"no recorded transcripts for {protocol.name} under {TRANSCRIPTS}")
    sessions: list[Transcript] = []
    total = 0
    while total < minimum:
        for transcript in base:
            sessions.append(transcript)
            total += len(transcript.lines)
    return sessions


def time_decode(sessions: list[Transcript]) -> float:
    start = CLOCK[0]()
    for transcript in sessions:
        for line in transcript.lines:
            _decode(line)
    return CLOCK[0]() - start


def time_corral(protocol: Protocol, sessions: list[Transcript]) -> float:
    make, entry = protocol.make, protocol.entry
    start = CLOCK[0]()
    for transcript in sessions:
        parser = make()
        feed = entry(parser)
        sent = getattr(parser, "feed_sent", None)
        finish = getattr(parser, "finish", None)
        for command, lines in transcript.runs:
            if command is not None and sent is not None:
                sent(command)
            for line in lines:
                feed(loads(line))
        if finish is not None:
            finish()
    return CLOCK[0]() - start


class _OneEvent:
    """The least a parser can do for a line it shows: one event that keeps the line."""

    @total
    def feed(self, obj: Any) -> list[Event]:
        return [TextDelta(text="", raw=obj)]


class _Head(msgspec.Struct):
    """The discriminators of every protocol's lines (``type``; JSON-RPC ``method``), nothing else."""

    type: Any = None
    method: Any = None


_head = msgspec.json.Decoder(_Head).decode


_MARKS = bytes(
    ord("0") if 48 <= b <= 57 else ord("e") if b in b"eE" else b if b in b"+." else 32
    for b in range(256)
)
_LONG_RUN = b"0" * 200


def may_overflow(line: bytes) -> bool:
    """Whether ``line`` may hold a number too large for a float. msgspec refuses one when it
    decodes it (so ``loads`` does) and lets it pass when it skips it (a typed decode), so a typed
    pipeline that must refuse what ``loads`` refuses, and keep ``raw`` the store can read back,
    has to look. Such a number has an exponent of three digits or more, or 200 digits or more
    before its exponent (one of two digits adds at most 99): with every digit made ``0`` and all
    but ``e + .`` blanked, either shows. (A long id matches too; that line would merely be decoded
    the usual way.)"""
    marked = line.translate(_MARKS)
    return b"e000" in marked or b"e+000" in marked or _LONG_RUN in marked


class _TypedEvent:
    """The least a typed pipeline can do for a line it shows: decode the line's discriminators
    into a struct (msgspec skips the rest without building it), check the bytes are UTF-8 (a
    typed decode does not look inside what it skips), and make one event whose ``raw`` is the
    line's bytes, to be decoded only when someone reads it."""

    @total
    def feed(self, line: bytes) -> list[Event]:
        _head(line)
        if not line.isascii():
            line.decode()
        raw = msgspec.Raw(line)
        _Clean.value = raw  # storable: the line was decoded and its UTF-8 checked
        return [TextDelta(text="", raw=raw)]


class _TypedGuarded(_TypedEvent):
    """:class:`_TypedEvent` that also looks for numbers out of a float's range."""

    @total
    def feed(self, line: bytes) -> list[Event]:
        _head(line)
        if not line.isascii():
            line.decode()
        may_overflow(line)
        raw = msgspec.Raw(line)
        _Clean.value = raw
        return [TextDelta(text="", raw=raw)]


def time_loads(sessions: list[Transcript]) -> float:
    start = CLOCK[0]()
    for transcript in sessions:
        for line in transcript.lines:
            loads(line)
    return CLOCK[0]() - start


def time_one_event(sessions: list[Transcript]) -> float:
    start = CLOCK[0]()
    for transcript in sessions:
        feed = _OneEvent().feed
        for line in transcript.lines:
            feed(loads(line))
    return CLOCK[0]() - start


def time_typed(sessions: list[Transcript], kind: type[_TypedEvent] = _TypedEvent) -> float:
    start = CLOCK[0]()
    for transcript in sessions:
        feed = kind().feed
        for line in transcript.lines:
            feed(line)
    return CLOCK[0]() - start


def run(lines: int, repeat: int) -> list[dict[str, Any]]:
    results = []
    header = (
        f"{'protocol':<20} {'lines':>8} {'decode l/s':>12} {'corral l/s':>12} {'ratio':>6}  "
        f"{'goal':<18} ceilings: {'loads':>5} {'1 event':>7} {'typed':>5} {'+range':>6}"
    )
    print(header)
    for protocol in PROTOCOLS:
        sessions = workload(protocol, lines)
        count = sum(len(s.lines) for s in sessions)
        time_corral(protocol, sessions[:2])  # warm caches and lazy imports
        time_one_event(sessions[:2])
        time_typed(sessions[:2])
        # Best of ``repeat`` for each pipeline, the pipelines taking turns, so that a busy spell
        # on a shared machine does not fall on one of them only.
        anchor = only_loads_t = one_event_t = typed_t = guarded_t = ours = float("inf")
        for _ in range(repeat):
            anchor = min(anchor, time_decode(sessions))
            only_loads_t = min(only_loads_t, time_loads(sessions))
            one_event_t = min(one_event_t, time_one_event(sessions))
            typed_t = min(typed_t, time_typed(sessions))
            guarded_t = min(guarded_t, time_typed(sessions, _TypedGuarded))
            ours = min(ours, time_corral(protocol, sessions))
        ratio = anchor / ours
        only_loads = anchor / only_loads_t
        one_event = anchor / one_event_t
        typed = anchor / typed_t
        guarded = anchor / guarded_t
        met = "met" if ratio >= GOAL else f"missed (< {GOAL})"
        print(
            f"{protocol.name:<20} {count:>8} {count / anchor:>12,.0f} {count / ours:>12,.0f}"
            f" {ratio:>6.2f}  {met:<18}           {only_loads:>5.2f} {one_event:>7.2f} {typed:>5.2f} {guarded:>6.2f}"
        )
        results.append(
            {
                "protocol": protocol.name,
                "lines": count,
                "ratio": ratio,
                "ceiling_loads": only_loads,
                "ceiling_one_event": one_event,
                "ceiling_typed": typed,
                "ceiling_typed_range": guarded,
            }
        )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_parsers")
    parser.add_argument("--lines", type=int, default=60_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu")
    args = parser.parse_args(argv)
    CLOCK[0] = CLOCKS[args.clock]
    print(f"(timed by {args.clock} clock)")
    run(args.lines, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
