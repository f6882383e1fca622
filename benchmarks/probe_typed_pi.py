"""A design probe for decision 041, not a parser corral uses: Pi RPC lines decoded into per-type
``msgspec.Struct`` values, ``raw`` kept as the line's bytes.

    python -m benchmarks.probe_typed_pi [--lines 60000] [--repeat 5] [--clock cpu|wall]

The lines that carry most of a Pi session (``message_update``, ``message_start``/``_end``,
``agent_start``/``_end``, ``turn_start``/``_end``) are decoded with a tagged union of structs that
declare only the fields the parser reads; msgspec skips the rest without building it. The events
are the ones :class:`~corral.protocols.pi_rpc.PiRpcParser` makes, except that ``raw`` is the line's
``msgspec.Raw`` (what a lazily decoded ``raw`` would hold until it is read). Every other line, and
any line the typed decode refuses (a field of another type, bytes that are not UTF-8, a line the
store could not read back), goes the drivers' way: ``loads`` then ``feed`` on the same parser.

Two checks run first, on every recorded Pi transcript: the probe's events equal the parser's
(``raw`` decoded for the comparison) for every line, and for eight mutations of every line
(``corral.testing.fuzz``, fixed seed, each on parsers primed with the lines before it). Then it
times, interleaved and against the same anchor as ``bench_parsers`` (``msgspec.json.decode`` of
each line): corral today, this probe, and a second probe that decodes the line's type first and
only skips the lines that make no event (every other line is decoded twice), which keeps ``raw``
a dict but costs more than it saves. The first probe runs twice: as it must be (a line that may
hold a number out of a float's range goes the dict way, :func:`bench_parsers.may_overflow`), and
without that scan, which is faster and wrong for such lines (a ninth mutation puts one in).
"""

from __future__ import annotations

import argparse
import random
import sys
from typing import Any

import msgspec

from corral._process._decode import BadJson, loads
from corral.events import (
    Error,
    Event,
    ReasoningComplete,
    ReasoningDelta,
    StatusChanged,
    StopReason,
    TextComplete,
    TextDelta,
    TurnCompleted,
    Usage,
)
from corral.events._fields import _Clean
from corral.protocols._total import total
from corral.protocols.pi_rpc import _STOP, PiRpcParser, _int, _Turn
from corral.testing import fuzz

from . import bench_parsers
from .bench_parsers import may_overflow


class _TurnStart(msgspec.Struct, tag_field="type", tag="turn_start"):
    pass


class _TurnEnd(msgspec.Struct, tag_field="type", tag="turn_end"):
    pass


class _AgentStart(msgspec.Struct, tag_field="type", tag="agent_start"):
    pass


class _AgentEnd(msgspec.Struct, tag_field="type", tag="agent_end"):
    pass


class _MessageStart(msgspec.Struct, tag_field="type", tag="message_start"):
    message: Any = None


class _AssistantEvent(msgspec.Struct):
    type: Any = None
    delta: Any = None
    content: Any = None
    reason: Any = None


class _MessageUpdate(msgspec.Struct, tag_field="type", tag="message_update"):
    assistantMessageEvent: _AssistantEvent | None = None


class _EndMessage(msgspec.Struct):
    role: Any = None
    stopReason: Any = None
    errorMessage: Any = None
    usage: Any = None
    model: Any = None


class _MessageEnd(msgspec.Struct, tag_field="type", tag="message_end"):
    message: _EndMessage | None = None


_Line = (
    _TurnStart | _TurnEnd | _AgentStart | _AgentEnd | _MessageStart | _MessageUpdate | _MessageEnd
)
_typed = msgspec.json.Decoder(_Line).decode
_REFUSED = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, RecursionError)
_SHALLOW = 1024


class TypedPi(PiRpcParser):
    """The probe: ``feed_line(bytes)`` is what a driver would call instead of ``loads`` + ``feed``."""

    guarded = True
    """Whether lines that may hold a number out of a float's range go the dict way."""

    def feed_line(self, line: bytes) -> list[Event]:
        try:
            msg = _typed(line)
            if not line.isascii():
                line.decode()  # a typed decode does not check the UTF-8 of what it skips
        except _REFUSED:
            return self._dict_path(line)
        if len(line) > _SHALLOW and line.count(b"[") + line.count(b"{") > 512:
            return self._dict_path(line)
        if self.guarded and may_overflow(line):  # nor the range of the numbers it skips
            return self._dict_path(line)
        raw = msgspec.Raw(line)
        _Clean.value = raw  # decoded by msgspec and its UTF-8 checked: storable as it is
        return self._typed(msg, raw)

    def _dict_path(self, line: bytes) -> list[Event]:
        try:
            obj = loads(line)
        except BadJson as exc:
            return [Error(message=f"not JSON: {exc.reason}", code="invalid_json")]
        return self.feed(obj)

    @total
    def _typed(self, msg: Any, raw: msgspec.Raw) -> list[Event]:
        kind = type(msg)
        if kind is _MessageUpdate:
            return self._update(msg.assistantMessageEvent, raw)
        if kind is _MessageStart:
            message = msg.message
            if type(message) is dict and message.get("role") == "assistant":
                self.turn.messages += 1
            return []
        if kind is _MessageEnd:
            return self._end(msg.message, raw)
        if kind is _AgentStart:
            if not self.turn.open:
                self.turns += 1
                self.turn = _Turn(open=True, index=self.turns)
            self.turn.started = True
            return [StatusChanged(status="busy", raw=raw)]
        if kind is _AgentEnd:
            return self._agent_end_typed(raw)
        return []

    def _update(self, ev: _AssistantEvent | None, raw: msgspec.Raw) -> list[Event]:
        if ev is None:
            return []
        kind, mid = ev.type, self._message_id()
        if kind == "text_delta" and type(ev.delta) is str:
            text = self._joiner.join(ev.delta, (mid, "text"))
            return [TextDelta(text=text, message_id=mid, raw=raw)]
        if kind == "thinking_delta" and type(ev.delta) is str:
            text = self._joiner.join(ev.delta, (mid, "thinking"))
            return [ReasoningDelta(text=text, message_id=mid, raw=raw)]
        if kind == "text_end":
            text = str(ev.content or "")
            self.turn.text = text
            return [TextComplete(text=text, message_id=mid, raw=raw)]
        if kind == "thinking_end":
            return [ReasoningComplete(text=str(ev.content or ""), message_id=mid, raw=raw)]
        if kind == "error":
            self.turn.stop = str(ev.reason or "error")
        return []

    def _end(self, msg: _EndMessage | None, raw: msgspec.Raw) -> list[Event]:
        if msg is None or msg.role != "assistant":
            return []
        if isinstance(msg.stopReason, str):
            self.turn.stop = msg.stopReason
        if isinstance(msg.errorMessage, str):
            self.turn.error = msg.errorMessage
        usage = msg.usage
        if not isinstance(usage, dict):
            return []
        cost = usage.get("cost") if isinstance(usage.get("cost"), dict) else {}
        total_cost = cost.get("total")
        return [
            Usage(
                input_tokens=_int(usage.get("input")),
                output_tokens=_int(usage.get("output")),
                cache_read_tokens=_int(usage.get("cacheRead")),
                cache_write_tokens=_int(usage.get("cacheWrite")),
                cost_usd=float(total_cost) if isinstance(total_cost, int | float) else None,
                model=msg.model if isinstance(msg.model, str) else None,
                raw=raw,
            )
        ]

    def _agent_end_typed(self, raw: msgspec.Raw) -> list[Event]:
        turn = self.turn
        self.turn = _Turn()
        if turn.interrupted or turn.stop == "aborted":
            reason = StopReason.CANCELLED
        elif turn.stop == "error" or (turn.error and turn.stop is None):
            reason = StopReason.ERROR
        else:
            reason = _STOP.get(turn.stop or "", StopReason.END_TURN)
        return [
            TurnCompleted(
                stop_reason=reason,
                turn_id=str(turn.index) if turn.index else None,
                error=turn.error if reason is StopReason.ERROR else None,
                result_text=turn.text,
                raw=raw,
            )
        ]


class UnguardedPi(TypedPi):
    """:class:`TypedPi` without the scan for numbers out of range (faster, and wrong for them)."""

    guarded = False


class _Head(msgspec.Struct):
    type: Any = None
    assistantMessageEvent: Any = None


_head = msgspec.json.Decoder(_Head).decode
_QUIET_UPDATES = frozenset({"text_start", "thinking_start", "toolcall_start", "toolcall_delta"})


class SkipPi(PiRpcParser):
    """The second probe: lines that make no event are answered from their type alone (without the
    range scan, so it differs where a skipped number is out of range, and is slower anyway)."""

    def feed_line(self, line: bytes) -> list[Event]:
        try:
            head = _head(line)
        except _REFUSED:
            head = None
        if len(line) > _SHALLOW and line.count(b"[") + line.count(b"{") > 512:
            head = None
        if head is not None and head.type in ("turn_start", "turn_end"):
            return []
        if head is not None and head.type == "message_update":
            ev = head.assistantMessageEvent
            quiet = ev.get("type") if type(ev) is dict else None
            if type(quiet) is str and quiet in _QUIET_UPDATES:
                return []
        try:
            obj = loads(line)
        except BadJson as exc:
            return [Error(message=f"not JSON: {exc.reason}", code="invalid_json")]
        return self.feed(obj)


def _readable(raw: msgspec.Raw) -> Any:
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return "<raw the store could not read back>"


def _plain(events: list[Event]) -> list[Event]:
    return [
        msgspec.structs.replace(e, raw=_readable(e.raw)) if type(e.raw) is msgspec.Raw else e
        for e in events
    ]


def _out_of_range(line: Any, rng: random.Random) -> bytes:
    """``line`` with one of its values (or a new key) replaced by a number no float can hold."""
    paths = [p for p in fuzz._paths(line) if p]
    mark = "\ue000out-of-range\ue000"
    if paths:
        marked = fuzz._replace(line, rng.choice(paths), mark)
    elif isinstance(line, dict):
        marked = {**line, "x": mark}
    else:
        return fuzz._dumps(line)
    return fuzz._dumps(marked).replace(fuzz._dumps(mark), rng.choice([b"1e999", b"-2E+400"]), 1)


def _state(parser: PiRpcParser) -> dict[str, Any]:
    state = dict(vars(parser))
    state["_joiner"] = vars(state["_joiner"])
    return state


def check(probe: type[PiRpcParser]) -> tuple[int, int]:
    """Lines compared and lines whose events differ from the parser's (recorded + mutated)."""
    target = fuzz.TARGETS["pi-rpc"]
    rng = random.Random(41)
    compared = differ = 0
    for rec in fuzz.recordings(target, bench_parsers.TRANSCRIPTS):
        ours, theirs = PiRpcParser(), probe()
        for index, (direction, line) in enumerate(rec.entries):
            if direction == "in":
                ours.feed_sent(line)
                theirs.feed_sent(line)
                continue
            data = fuzz._dumps(line)
            compared += 1
            expected = fuzz.feed_line(target, ours, data)
            differ += _plain(theirs.feed_line(data)) != expected
            for kind in (*fuzz.MUTATIONS, "out_of_range"):
                bad = (
                    _out_of_range(line, rng)
                    if kind == "out_of_range"
                    else fuzz.mutate(line, kind, rng)
                )
                a = fuzz.primed_parser(target, rec, index)
                b = probe()
                for d, seen in rec.entries[:index]:
                    b.feed_sent(seen) if d == "in" else b.feed(seen)
                compared += 1
                differ += _plain(b.feed_line(bad)) != fuzz.feed_line(target, a, bad) or _state(
                    a
                ) != _state(b)
        differ += ours.finish() != theirs.finish()
    return compared, differ


def _time_probe(probe: type[PiRpcParser], sessions: list[bench_parsers.Transcript]) -> float:
    start = bench_parsers.CLOCK[0]()
    for transcript in sessions:
        parser = probe()
        feed, sent = parser.feed_line, parser.feed_sent
        for command, lines in transcript.runs:
            if command is not None:
                sent(command)
            for line in lines:
                feed(line)
        parser.finish()
    return bench_parsers.CLOCK[0]() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.probe_typed_pi")
    parser.add_argument("--lines", type=int, default=60_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--clock", choices=sorted(bench_parsers.CLOCKS), default="cpu")
    args = parser.parse_args(argv)
    bench_parsers.CLOCK[0] = bench_parsers.CLOCKS[args.clock]
    failed = False
    for probe in (TypedPi, UnguardedPi, SkipPi):
        compared, differ = check(probe)
        failed |= differ > 0 and probe is TypedPi
        print(f"{probe.__name__}: {compared} lines (recorded and mutated), {differ} differ")
    protocol = next(p for p in bench_parsers.PROTOCOLS if p.name == "pi-rpc")
    sessions = bench_parsers.workload(protocol, args.lines)
    count = sum(len(s.lines) for s in sessions)
    anchor = ours = typed = unguarded = skip = float("inf")
    for _ in range(args.repeat):
        anchor = min(anchor, bench_parsers.time_decode(sessions))
        ours = min(ours, bench_parsers.time_corral(protocol, sessions))
        typed = min(typed, _time_probe(TypedPi, sessions))
        unguarded = min(unguarded, _time_probe(UnguardedPi, sessions))
        skip = min(skip, _time_probe(SkipPi, sessions))
    print(
        f"pi-rpc, {count} lines, ratio to msgspec decode: corral {anchor / ours:.2f}"
        f"  typed {anchor / typed:.2f}  typed without the range scan {anchor / unguarded:.2f}"
        f"  skip {anchor / skip:.2f}"
    )
    return int(failed)


if __name__ == "__main__":
    sys.exit(main())
