"""``gemini -p … --output-format stream-json`` (one JSON object per stdout line) → corral events.

:class:`GeminiStreamParser` is synchronous and does no I/O: ``feed(obj)`` per decoded line,
``finish()`` once the process has exited. One process runs one turn. What Gemini CLI 0.61.0
printed against the scripted model (every line has ``type`` and an ISO ``timestamp``)::

    init {session_id, model}                       → remembered (``session_id``), StatusChanged(running)
    message {role: "user", content}                → nothing: the CLI echoes the prompt
    message {role: "assistant", content, delta}    → TextDelta (``delta: true`` on every one seen)
    tool_use {tool_name, tool_id, parameters}      → ToolCallStarted
    tool_result {tool_id, status, output?, error?} → ToolCallCompleted / ToolCallFailed (+ FileDiff)
    error {severity: warning|error, message}       → WarningEvent / ErrorEvent
    result {status, error?, stats}                 → Usage, TurnCompleted (end_turn / error)

The text between two tool calls is one message (``message_id`` ``m0``, ``m1`` …): it is completed
(``TextComplete``) when a tool call or the result follows. A ``tool_result`` carries no input
and, for ``write_file``, no output; the diff of an edit comes from what the call asked to write
(``parameters``), as for Qwen Code. ``stats`` are the whole run's (every model request of this
process). A run with no ``result`` line ends, in ``finish()``, with an error naming the exit
code. Malformed input never raises (:func:`~corral.protocols._total.total`).
"""

from __future__ import annotations

from typing import Any

from ..events import (
    ErrorEvent,
    Event,
    StatusChanged,
    StopReason,
    TextComplete,
    TextDelta,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallStarted,
    ToolKind,
    ToolResult,
    TurnCompleted,
    UnknownEvent,
    Usage,
    WarningEvent,
)
from ..events._text import SurrogateJoiner
from ._claude_tools import file_diff, tool_cmd, tool_file, tool_kind, tool_title
from ._total import mapping, total

__all__ = ["GeminiStreamParser"]


def _int(value: Any) -> int | None:
    return value if type(value) is int else None


class GeminiStreamParser:
    def __init__(self) -> None:
        self.session_id: str | None = None
        self.model: str | None = None
        self.turn_done = False
        self._segment = 0
        self._text: list[str] = []
        self._last_text: str | None = None
        self._calls: dict[str, tuple[str, ToolKind, Any]] = {}
        self._joiner = SurrogateJoiner()

    @total
    def feed(self, obj: dict[str, Any]) -> list[Event]:
        if type(obj) is not dict:
            return [UnknownEvent(raw=obj)]
        kind = obj.get("type")
        if kind == "message":
            return self._message(obj)
        if kind == "tool_use":
            return self._tool_use(obj)
        if kind == "tool_result":
            return self._tool_result(obj)
        if kind == "init":
            sid = obj.get("session_id")
            if type(sid) is str and sid:
                self.session_id = sid
            model = obj.get("model")
            self.model = model if type(model) is str else self.model
            return [StatusChanged(status="running", raw=obj)]
        if kind == "result":
            return self._result(obj)
        if kind == "error":
            message = str(obj.get("message") or "")
            if obj.get("severity") == "error":
                return [ErrorEvent(message=message, raw=obj)]
            return [WarningEvent(message=message, raw=obj)]
        return [UnknownEvent(vendor_type=str(kind), raw=obj)]

    @total
    def finish(self, exit_code: int | None = None, stderr_tail: str = "") -> list[Event]:
        """The process exited: a turn with no ``result`` line fails, naming the exit code."""
        if self.turn_done:
            return []
        self.turn_done = True
        events = self._complete_text(None)
        message = f"gemini exited with code {exit_code} before the turn completed"
        if stderr_tail.strip():
            message = f"{message}: {stderr_tail.strip()[-1000:]}"
        return [*events, TurnCompleted(stop_reason=StopReason.ERROR, error=message)]

    def cancelled(self) -> list[Event]:
        """The driver ended the process on purpose (``interrupt()``): the turn is cancelled."""
        if self.turn_done:
            return []
        self.turn_done = True
        return [*self._complete_text(None), TurnCompleted(stop_reason=StopReason.CANCELLED)]

    # ── lines ──
    def _message(self, obj: dict[str, Any]) -> list[Event]:
        if obj.get("role") != "assistant":
            return []  # the prompt, echoed
        mid = f"m{self._segment}"
        text = self._joiner.join(obj.get("content"), mid)
        events: list[Event] = []
        if text:
            self._text.append(text)
            events.append(TextDelta(text=text, message_id=mid, raw=obj))
        if obj.get("delta") is not True:  # a whole message (never seen on 0.61.0)
            events += self._complete_text(obj)
        return events

    def _complete_text(self, raw: Any) -> list[Event]:
        mid = f"m{self._segment}"
        tail = self._joiner.flush(mid)
        if tail:
            self._text.append(tail)
        if not self._text:
            return []
        text = "".join(self._text)
        self._text = []
        self._segment += 1
        self._last_text = text
        return [TextComplete(text=text, message_id=mid, raw=raw)]

    def _tool_use(self, obj: dict[str, Any]) -> list[Event]:
        events = self._complete_text(None)
        call_id = str(obj.get("tool_id") or "")
        name = str(obj.get("tool_name") or "tool")
        params = obj.get("parameters")
        kind = tool_kind(name, params)
        self._calls[call_id] = (name, kind, params)
        events.append(
            ToolCallStarted(
                call_id=call_id,
                name=name,
                kind=kind,
                title=tool_title(name, params),
                input=params,
                file=tool_file(params),
                cmd=tool_cmd(params),
                raw=obj,
            )
        )
        return events

    def _tool_result(self, obj: dict[str, Any]) -> list[Event]:
        call_id = str(obj.get("tool_id") or "")
        name, kind, params = self._calls.pop(call_id, (None, None, None))
        output = obj.get("output")
        text = output if type(output) is str else ""
        if obj.get("status") == "success":
            events: list[Event] = []
            if kind is ToolKind.EDIT and name is not None:
                diff = file_diff(call_id, name, params, None, obj)
                if diff is not None:
                    events.append(diff)
            result = ToolResult(output=text)
            events.append(
                ToolCallCompleted(call_id=call_id, result=result, name=name, kind=kind, raw=obj)
            )
            return events
        err = mapping(obj.get("error"))
        message = err.get("message")
        return [
            ToolCallFailed(
                call_id=call_id,
                error=str(message or text or obj.get("status") or "tool failed"),
                result=ToolResult(output=text, is_error=True),
                name=name,
                kind=kind,
                raw=obj,
            )
        ]

    def _result(self, obj: dict[str, Any]) -> list[Event]:
        events = self._complete_text(None)
        stats = mapping(obj.get("stats"))
        if stats:
            events.append(
                Usage(
                    input_tokens=_int(stats.get("input_tokens")),
                    output_tokens=_int(stats.get("output_tokens")),
                    cache_read_tokens=_int(stats.get("cached")),
                    model=self.model,
                    raw=stats,
                )
            )
        self.turn_done = True
        if obj.get("status") == "success":
            events.append(
                TurnCompleted(stop_reason=StopReason.END_TURN, result_text=self._last_text, raw=obj)
            )
            return events
        err = mapping(obj.get("error"))
        message = str(err.get("message") or obj.get("status") or "the run failed")
        events.append(
            TurnCompleted(
                stop_reason=StopReason.ERROR,
                error=message,
                result_text=self._last_text,
                raw=obj,
            )
        )
        return events
