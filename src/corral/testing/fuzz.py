"""Mutation fuzzing of the protocol parsers, from the recorded transcripts.

Every protocol is a :class:`Target`: the fixture directories it replays and how a driver feeds a
line to its parser (:func:`corral._process._decode.loads`, then the parser's entry point). A
mutation takes one recorded line the CLI printed and breaks it the way a misbehaving agent could:
truncated, a field of the wrong JSON type, ``null`` everywhere, 1,000–2,000-deep nesting, an
unhashable JSON-RPC id, invalid UTF-8, lone surrogate escapes, or text a terminal renderer could
mistake for markup.

:func:`check_line` feeds one line and reports what no parser may do: raise, or produce an event
the store cannot encode and read back. Used by the property tests (``tests/unit/fuzz``) and the
fuzz benchmark (``benchmarks/bench_fuzz.py``).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from .._process._decode import BadJson, loads
from ..events import Error, Event, decode_event, encode
from ..protocols.acp import AcpParser
from ..protocols.claude_stream_json import ClaudeStreamParser
from ..protocols.codex_app_server import AppServerParser
from ..protocols.codex_exec import ExecParser
from ..protocols.gemini_stream_json import GeminiStreamParser
from ..protocols.hermes_gateway import HermesGatewayParser
from ..protocols.opencode_run import OpenCodeRunParser
from ..protocols.opencode_sse import OpenCodeSseParser
from ..protocols.pi_rpc import PiRpcParser

MUTATIONS = (
    "truncate",
    "wrong_type",
    "null_everywhere",
    "deep_nesting",
    "bad_id",
    "invalid_utf8",
    "lone_surrogate",
    "hostile_text",
)
"""The ways :func:`mutate` breaks a line."""

_ODD_VALUES: tuple[Any, ...] = (None, 0, -1, 2**70, 1.5, True, "", "x", [], [1], {}, {"a": None})
_BAD_IDS: tuple[Any, ...] = ([1], {}, {"id": 1}, 1.5, True, None, [], "")
_BAD_BYTES = (b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf0\x9f", b"\x80\x80", b"\xfe\xff")
_SURROGATES = ("\\ud83d", "\\ude00", "\\udfff", "\\ud800\\ud800")
_PLACEHOLDER = "\u0000corral-fuzz\u0000"
_HOSTILE = (
    "[/]",
    "[bold",
    "[red]x[/blue]",
    "  \n ",
    "\x1b[31m\x1b]0;t\x07",
    "\u202e",
    "\r",
    "\x00",
)
"""Strings that a terminal renderer must show as text: markup, escapes, blank or control text."""


@dataclass(frozen=True)
class Target:
    """One protocol: its fixtures, its parser, and how the driver feeds it."""

    name: str
    fixture_globs: tuple[str, ...]
    make_parser: Callable[[], Any]
    feed: Callable[[Any, Any], list[Event]]
    feed_sent: Callable[[Any, Any], list[Event]]


TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target(
            "claude-stream-json",
            ("claude/*/*.jsonl", "qwen/*/*.jsonl"),
            ClaudeStreamParser,
            lambda p, obj: p.feed(obj),
            lambda p, obj: p.feed_sent(obj),
        ),
        Target(
            "codex-app-server",
            ("codex/*/[!e]*.jsonl",),
            AppServerParser,
            lambda p, obj: p.feed(obj),
            lambda p, obj: [],
        ),
        Target(
            "codex-exec",
            ("codex/*/exec-*.jsonl",),
            ExecParser,
            lambda p, obj: p.feed(obj),
            lambda p, obj: [],
        ),
        Target(
            "gemini-stream-json",
            ("gemini-exec/*/*.jsonl",),
            GeminiStreamParser,
            lambda p, obj: p.feed(obj),
            lambda p, obj: [],
        ),
        Target(
            "acp",
            (
                "gemini/*/*.jsonl",
                "qwen-acp/*/*.jsonl",
                "opencode-acp/*/*.jsonl",
                "hermes/*/*.jsonl",
            ),
            AcpParser,
            lambda p, obj: acp_feed(p, obj),
            lambda p, obj: [],
        ),
        Target(
            "opencode-sse",
            ("opencode/*/*.jsonl",),
            OpenCodeSseParser,
            lambda p, obj: p.feed(obj),
            lambda p, obj: p.feed_sent(obj),
        ),
        Target(
            "opencode-run",
            ("opencode-run/*/*.jsonl",),
            OpenCodeRunParser,
            lambda p, obj: p.feed(obj),
            lambda p, obj: [],
        ),
        Target(
            "hermes-gateway",
            ("hermes-gateway/*/*.jsonl",),
            HermesGatewayParser,
            lambda p, obj: p.feed(obj),
            lambda p, obj: p.feed_sent(obj),
        ),
        Target(
            "pi-rpc",
            ("pi/*/*.jsonl",),
            PiRpcParser,
            lambda p, obj: p.feed(obj),
            lambda p, obj: p.feed_sent(obj),
        ),
    )
}


def acp_feed(parser: AcpParser, msg: Any) -> list[Event]:
    """One message from an ACP agent, to the parser entry point the driver (``adapters._acp``)
    would call: ``session/update`` → ``update``, a permission request → ``permission``, any other
    response → ``prompt_result`` / ``prompt_failed`` (the fuzz cannot tell which id was the
    prompt's, so every response is offered as one)."""
    if type(msg) is not dict:
        return []
    method = msg.get("method")
    params = msg.get("params")
    if method == "session/update":
        return parser.update(params.get("update") if type(params) is dict else None)
    if method == "session/request_permission":
        return parser.permission(str(msg.get("id")), params if type(params) is dict else {})
    if method is None and "error" in msg:
        error = msg["error"]
        message = error.get("message") if type(error) is dict else None
        return parser.prompt_failed(str(message or "prompt failed"), msg)
    if method is None and "result" in msg:
        return parser.prompt_result(msg["result"])
    return []


@dataclass(frozen=True)
class Recording:
    """One recorded transcript: the lines we sent and the lines the CLI printed, in order."""

    path: Path
    entries: tuple[tuple[str, Any], ...]
    """``(direction, line)`` pairs, ``direction`` being ``in`` or ``out``."""

    @property
    def out_lines(self) -> list[Any]:
        return [line for direction, line in self.entries if direction == "out"]


def recordings(target: Target, root: Path) -> list[Recording]:
    """Every recorded transcript of ``target`` under ``root`` (tests/fixtures/transcripts)."""
    out: list[Recording] = []
    for pattern in target.fixture_globs:
        for path in sorted(root.glob(pattern)):
            entries = []
            for text in path.read_text("utf-8").splitlines():
                if not text.strip():
                    continue
                entry = json.loads(text)
                if entry.get("dir") in ("in", "out") and "line" in entry:
                    entries.append((entry["dir"], entry["line"]))
            out.append(Recording(path, tuple(entries)))
    return out


# ── mutations ──


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths(child, (*prefix, index))


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: (_replace(v, rest, new) if k == head else v) for k, v in value.items()}
    copy = list(value)
    copy[head] = _replace(copy[head], rest, new)
    return copy


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


def mutate(line: Any, kind: str, rng: random.Random) -> bytes:
    """One recorded line (a decoded JSON value), broken by mutation ``kind``, as wire bytes."""
    paths = list(_paths(line))
    path = rng.choice(paths)
    if kind == "truncate":
        data = _dumps(line)
        return data[: rng.randrange(0, max(len(data), 1))]
    if kind == "wrong_type":
        current = _get(line, path)
        choices = [v for v in _ODD_VALUES if type(v) is not type(current)]
        return _dumps(_replace(line, path, rng.choice(choices)))
    if kind == "null_everywhere":
        share = rng.random()
        mutated = line
        for p in paths:
            if p and rng.random() < share:
                try:
                    mutated = _replace(mutated, p, None)
                except (IndexError, KeyError, TypeError):
                    continue
        return _dumps(mutated)
    if kind == "deep_nesting":
        depth = rng.randint(1000, 2000)
        inner = _dumps(_get(line, path))
        opener, closer = (b"[", b"]") if rng.random() < 0.5 else (b'{"a":', b"}")
        deep = opener * depth + inner + closer * depth
        marked = _dumps(_replace(line, path, _PLACEHOLDER))
        return marked.replace(_dumps(_PLACEHOLDER), deep, 1)
    if kind == "bad_id":
        if isinstance(line, dict):
            key = rng.choice(["id", "request_id", "itemId", "callID", "toolCallId", "messageId"])
            bad = dict(line)
            bad[key if rng.random() < 0.3 or key in bad else "id"] = rng.choice(_BAD_IDS)
            return _dumps(bad)
        return _dumps(_replace(line, path, rng.choice(_BAD_IDS)))
    if kind == "invalid_utf8":
        data = _dumps(line)
        at = rng.randrange(0, len(data) + 1)
        return data[:at] + rng.choice(_BAD_BYTES) + data[at:]
    if kind == "lone_surrogate":
        strings = [p for p in paths if isinstance(_get(line, p), str)]
        target = rng.choice(strings) if strings else path
        current = _get(line, target)
        text = current if isinstance(current, str) else ""
        at = rng.randrange(0, len(text) + 1)
        marked = _dumps(_replace(line, target, text[:at] + _PLACEHOLDER + text[at:]))
        escaped = rng.choice(_SURROGATES).encode("ascii")
        return marked.replace(_PLACEHOLDER.encode("utf-8"), escaped, 1)
    if kind == "hostile_text":
        strings = [p for p in paths if isinstance(_get(line, p), str)] or [path]
        return _dumps(_replace(line, rng.choice(strings), rng.choice(_HOSTILE)))
    raise ValueError(f"unknown mutation {kind!r}")


# ── feeding and checking ──


@dataclass
class Finding:
    """What a line did that no parser may do."""

    kind: str
    """``escape`` (an exception left the parser), ``unstorable`` (an event the store rejects),
    ``render`` (``corral run`` could not show it) or ``safety_net`` (informational)."""
    detail: str
    line: bytes


def feed_line(target: Target, parser: Any, data: bytes) -> list[Event]:
    """Feed one wire line the way the drivers do: decode with ``loads``, then the parser."""
    try:
        obj = loads(data)
    except BadJson as exc:
        return [Error(message=f"not JSON: {exc.reason}", code="invalid_json")]
    return target.feed(parser, obj)


def unstorable(event: Any) -> str | None:
    """Why the store could not keep ``event`` (``None`` when it can)."""
    try:
        back = decode_event(encode(event))
    except (UnicodeEncodeError, RecursionError, TypeError, ValueError, OverflowError) as exc:
        return f"{type(event).__name__}: {type(exc).__name__}: {exc}"
    except msgspec.MsgspecError as exc:
        return f"{type(event).__name__}: {type(exc).__name__}: {exc}"
    if type(back) is not type(event):
        return f"{type(event).__name__} reads back as {type(back).__name__}"
    return None


_NET_CODES = frozenset({"parse_error", "invalid_event"})


def check_line(
    target: Target,
    parser: Any,
    data: bytes,
    render: Callable[[Event], None] | None = None,
    *,
    net: bool = False,
) -> list[Finding]:
    """Feed ``data``; report an escaping exception, an unstorable event, or a renderer failure
    (and with ``net``, each event the parsers' safety net made: ``safety_net``, not a failure)."""
    try:
        events = feed_line(target, parser, data)
    except Exception as exc:
        return [Finding("escape", f"{type(exc).__name__}: {exc}", data)]
    findings = []
    for event in events:
        if net and isinstance(event, Error) and event.code in _NET_CODES:
            findings.append(Finding("safety_net", event.message, data))
        why = unstorable(event)
        if why is not None:
            findings.append(Finding("unstorable", why, data))
            continue
        if render is not None:
            try:
                render(event)
            except Exception as exc:
                findings.append(Finding("render", f"{type(exc).__name__}: {exc}", data))
    return findings


def primed_parser(target: Target, recording: Recording, upto: int) -> Any:
    """A parser that has seen ``recording``'s first ``upto`` entries, unmutated."""
    parser = target.make_parser()
    for direction, line in recording.entries[:upto]:
        if direction == "out":
            target.feed(parser, line)
        else:
            target.feed_sent(parser, line)
    return parser
