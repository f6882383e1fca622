"""The rendering rules every terminal view follows — the same as the web app's transcript.

* Assistant text streams as it comes; reasoning is not printed (the page keeps it collapsed).
* A tool call is one line (``⏺ name: command or file``) once its input is known, then ``✓``/``✗``.
* Diffs are printed; approvals and questions as ``?`` lines with their answer as ``→``.
* A prompt appears once, when it is sent (``› text``); its delivery state is never a line of its
  own, except the ones the user must see: failed, canceled and indeterminate (seed 001's wording).
* Each turn ends with one line: how it ended, and its usage (tokens, cost).
* Events with nothing to show (unknown vendor payloads, busy/idle…) print nothing.

:class:`Rules` keeps the little state this needs (tool labels, streamed messages, usage of the
turn) and turns each event into :class:`Piece` values; the renderers in :mod:`._run_render` print
them, with colour (``corral run``) or as plain text (``corral sessions show|tail``, ``corral chat``).
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from ..events import (
    ApprovalRequested,
    ApprovalResolved,
    Event,
    FileDiff,
    QuestionAnswered,
    QuestionAsked,
    SessionEnded,
    SessionStarted,
    StatusChanged,
    TextComplete,
    TextDelta,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallStarted,
    ToolCallUpdated,
    TurnCompleted,
    Usage,
)

Stream = Literal["out", "err"]
Kind = Literal[
    "text", "user", "tool", "ok", "fail", "diff", "ask", "answer", "info", "warn", "error"
]

PROMPT_WORDING = {
    "failed": "failed: the agent did not accept this prompt; retry it with `corral sessions retry`",
    "canceled": "canceled: never sent",
    "indeterminate": (
        "indeterminate: corral stopped after the agent may have received this prompt, before its"
        " delivery was recorded; it is never replayed automatically. Retry only after checking"
        " the conversation for a duplicate"
    ),
}
"""The prompt states a person must see, worded as in seed 001 (and the web app)."""

QUIET_STATUS = frozenset(
    {"busy", "idle", "running", "ready", "commands", "session_info", "context", "requesting"}
)

TURN_WORDS = {
    "end_turn": "turn finished",
    "cancelled": "turn stopped",
    "max_tokens": "turn ended: output limit reached",
    "max_turns": "turn ended: step limit reached",
    "refusal": "turn ended: the model refused",
    "error": "turn failed",
}


class Piece(NamedTuple):
    """A fragment to print: ``text`` (with its own newlines) on ``stream``, drawn as ``kind``."""

    text: str
    stream: Stream = "err"
    kind: Kind = "info"


class Rules:
    """One session's events → pieces. Feed every event of the session, in order."""

    def __init__(self) -> None:
        self._labels: dict[str, str] = {}
        self._shown: set[str] = set()
        self._streamed: set[str | None] = set()
        self._mid_line = False
        self._usage = [0, 0]
        self._cost: float | None = None
        self._any_usage = False
        self._started = False

    def pieces(self, event: Event) -> list[Piece]:
        out = self._pieces(event)
        if out and out[-1].stream == "out" and out[-1].kind == "text":
            self._mid_line = not out[-1].text.endswith("\n")
        elif out:
            self._mid_line = False
        return out

    def _break(self) -> list[Piece]:
        return [Piece("\n", "out", "text")] if self._mid_line else []

    def _call(self, call_id: str, parent: str | None) -> list[Piece]:
        if call_id in self._shown:
            return []
        self._shown.add(call_id)
        indent = "  " if parent else ""
        return [
            *self._break(),
            Piece(f"{indent}⏺ {self._labels.get(call_id, call_id)}\n", kind="tool"),
        ]

    def _pieces(self, ev: Event) -> list[Piece]:
        # Warnings and errors by their wire tag: the class names are being renamed
        # (Warning/Error shadow builtins), the tags stay.
        tag = ev.__struct_config__.tag
        if tag in ("warning", "error"):
            message = str(getattr(ev, "message", ""))
            level: Kind = "warn" if tag == "warning" else "error"
            return [*self._break(), Piece(f"{tag}: {message}\n", kind=level)]
        match ev:
            case TextDelta(parent_call_id=None):
                self._streamed.add(ev.message_id)
                return [Piece(ev.text, "out", "text")] if ev.text else []
            case TextComplete(parent_call_id=None):
                if ev.message_id in self._streamed:
                    return self._break()
                return [*self._break(), Piece(ev.text.rstrip("\n") + "\n", "out", "text")]
            case TextComplete():
                return [Piece(f"  ↳ {ev.text}\n", kind="info")]
            case SessionStarted(agent=agent):
                if self._started:
                    return []
                self._started = True
                version = f" {agent.version}" if agent.version else ""
                model = f" · model {agent.model}" if agent.model else ""
                return [Piece(f"· {agent.name}{version} · {ev.cwd or '.'}{model}\n")]
            case ToolCallStarted():
                self._labels[ev.call_id] = _label(ev.name, ev.cmd or ev.file or ev.title)
                return self._call(ev.call_id, ev.parent_call_id) if ev.input else []
            case ToolCallUpdated():
                if ev.cmd or ev.file or ev.title:
                    name = self._labels.get(ev.call_id, "tool").split(":", 1)[0]
                    self._labels[ev.call_id] = _label(name, ev.cmd or ev.file or ev.title)
                return self._call(ev.call_id, ev.parent_call_id)
            case ToolCallCompleted():
                label = self._labels.get(ev.call_id, ev.name or ev.call_id)
                mark = Piece(f"  ✓ {label}\n", kind="ok")
                if ev.result.is_error:
                    mark = Piece(f"  ✗ {label} ({_first_line(ev.result.output)})\n", kind="fail")
                return [*self._call(ev.call_id, ev.parent_call_id), mark]
            case ToolCallFailed():
                label = self._labels.get(ev.call_id, ev.name or ev.call_id)
                why = "denied" if ev.denied else _first_line(ev.error) or "failed"
                return [
                    *self._call(ev.call_id, ev.parent_call_id),
                    Piece(f"  ✗ {label} ({why})\n", kind="fail"),
                ]
            case FileDiff():
                if ev.diff:
                    return [*self._break(), Piece(ev.diff.rstrip("\n") + "\n", kind="diff")]
                return [*self._break(), Piece(f"  changed {ev.path}\n", kind="info")]
            case ApprovalRequested():
                what = ev.cmd or ev.file or ev.title
                text = f"? permission: {ev.tool_name}{': ' + what if what else ''}\n"
                return [*self._break(), Piece(text, kind="ask")]
            case ApprovalResolved():
                return [Piece(f"  → {ev.decision.value}\n", kind="answer")]
            case QuestionAsked():
                return [
                    *self._break(),
                    *(
                        Piece(f"? {q.question}{_options(q.options)}\n", kind="ask")
                        for q in ev.questions
                    ),
                ]
            case QuestionAnswered():
                return [Piece(f"  → {', '.join(ev.answers.values())}\n", kind="answer")]
            case Usage():
                self._usage[0] += ev.input_tokens or 0
                self._usage[1] += ev.output_tokens or 0
                if ev.cost_usd is not None:
                    self._cost = (self._cost or 0.0) + ev.cost_usd
                self._any_usage = True
                return []
            case TurnCompleted():
                return [*self._break(), self._turn_end(ev)]
            case StatusChanged():
                return self._status(ev)
            case SessionEnded():
                words = {"killed": "session killed", "failed": "session failed"}.get(
                    ev.reason.value, "session ended"
                )
                extra = f": {ev.message}" if ev.message and ev.message != ev.reason.value else ""
                kind: Kind = "error" if ev.reason.value == "failed" else "info"
                pieces = [*self._break(), Piece(f"· {words}{extra}\n", kind=kind)]
                if ev.stderr_tail and ev.reason.value == "failed":
                    pieces.append(Piece(ev.stderr_tail[-2000:].rstrip("\n") + "\n", kind="info"))
                return pieces
        return []

    def _turn_end(self, ev: TurnCompleted) -> Piece:
        words = TURN_WORDS.get(ev.stop_reason.value, f"turn ended: {ev.stop_reason.value}")
        if ev.error:
            words += f": {ev.error}"
        parts = [words]
        if self._any_usage:
            parts.append(f"in {self._usage[0]} · out {self._usage[1]}")
            if self._cost is not None:
                parts.append(f"${self._cost:.4f}")
        self._usage, self._cost, self._any_usage = [0, 0], None, False
        kind: Kind = "error" if ev.stop_reason.value == "error" else "info"
        return Piece(f"— {' · '.join(parts)}\n", kind=kind)

    def _status(self, ev: StatusChanged) -> list[Piece]:
        raw = ev.raw if isinstance(ev.raw, dict) else {}
        if ev.status.startswith("prompt."):
            state = ev.status.removeprefix("prompt.")
            text = str(raw.get("text") or "")
            if state == "sending":
                return [*self._break(), Piece(f"› {text}\n", "out", "user")]
            if state in PROMPT_WORDING:
                error = f" ({raw['error']})" if state == "failed" and raw.get("error") else ""
                line = f"  ! prompt {_quote(text)} {PROMPT_WORDING[state]}{error}\n"
                return [*self._break(), Piece(line, kind="warn")]
            return []
        if ev.status in QUIET_STATUS:
            return []
        return [*self._break(), Piece(f"· {ev.status}{': ' + ev.message if ev.message else ''}\n")]


def _label(name: str, detail: str | None) -> str:
    if detail and detail != name:
        return f"{name}: {detail.splitlines()[0][:160]}"
    return name


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0][:200] if (text or "").strip() else ""


def _options(options: tuple[str, ...]) -> str:
    return f" ({' / '.join(options)})" if options else ""


def _quote(text: str) -> str:
    short = text if len(text) <= 60 else text[:57] + "…"
    return repr(short)
