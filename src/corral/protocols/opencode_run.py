"""``opencode run --format json`` (one JSON object per stdout line) → corral events.

:class:`OpenCodeRunParser` is synchronous and does no I/O: ``feed(obj)`` per decoded line,
``finish(exit_code, stderr_tail)`` once the process has exited. One process runs one turn. Every
line is ``{type, timestamp, sessionID, …}``; what OpenCode 1.18.33 prints (recorded in
``tests/fixtures/transcripts/opencode-run/``)::

    step_start  {part: step-start}         → StatusChanged(running), once per turn
    text        {part: text, text}         → TextDelta + TextComplete (only finished parts)
    reasoning   {part: reasoning, text}    → ReasoningDelta + ReasoningComplete (``--thinking``)
    tool_use    {part: tool, state}        → ToolCallStarted + ToolCallCompleted | ToolCallFailed
                                             (+ FileDiff for an edit), only finished calls
    step_finish {part: step-finish, reason, tokens, cost}
                                           → Usage; reason ``stop``/``length``/… ends the turn,
                                             ``tool-calls`` means another step follows
    error       {error: {name, data}}      → ErrorEvent; the turn ends ``error`` at exit

Newer OpenCode builds end the stream with ``done``; it ends the turn too when 1.18.33's
``step_finish`` did not. A turn with no terminal step ends in ``finish()``: ``error`` when the
process failed or printed an error, else ``end_turn`` (1.18.33 stops after a step whose only tool
call was refused by a permission rule, with ``step_finish`` reason ``tool-calls`` and exit 0).
"""

from __future__ import annotations

from typing import Any

from ..events import (
    ErrorEvent,
    Event,
    ReasoningComplete,
    ReasoningDelta,
    StatusChanged,
    StopReason,
    TextComplete,
    TextDelta,
    TurnCompleted,
    UnknownEvent,
    Usage,
)
from ._opencode_parts import ToolTracker
from ._opencode_state import _error_message, _int, _Scope
from ._total import mapping, total

__all__ = ["OpenCodeRunParser"]

_TERMINAL: dict[str, StopReason] = {
    "stop": StopReason.END_TURN,
    "length": StopReason.MAX_TOKENS,
    "content-filter": StopReason.REFUSAL,
}
"""``step_finish`` reasons after which OpenCode asks the model nothing more this turn."""


class OpenCodeRunParser:
    def __init__(self) -> None:
        self.session_id: str | None = None
        """The OpenCode session (``ses_…``) of the run: ``--session`` resumes it."""
        self.turn_done = False
        self._running = False
        self._error: str | None = None
        self._last_text: str | None = None
        self._scope = _Scope()
        self._tools = ToolTracker(self._scope)

    @total
    def feed(self, obj: dict[str, Any]) -> list[Event]:
        if type(obj) is not dict:
            return [UnknownEvent(raw=obj)]
        kind = obj.get("type")
        sid = obj.get("sessionID")
        if isinstance(sid, str) and sid and self.session_id is None:
            self.session_id = self._scope.root = sid
        part = mapping(obj.get("part"))
        if kind == "text":
            return self._text(part, obj)
        if kind == "tool_use":
            if not part:
                return [UnknownEvent(vendor_type="tool_use", raw=obj)]
            return self._tools.update(part, None, obj)
        if kind == "step_start":
            if self._running:
                return []
            self._running = True
            return [StatusChanged(status="running", raw=obj)]
        if kind == "step_finish":
            return self._step_finish(part, obj)
        if kind == "reasoning":
            return self._reasoning(part, obj)
        if kind == "error":
            error = mapping(obj.get("error"))
            message = _error_message(error) if error else str(obj.get("error") or "error")
            self._error = message
            name = error.get("name") if error else None
            return [
                ErrorEvent(message=message, code=name if isinstance(name, str) else None, raw=obj)
            ]
        if kind == "done":
            if self.turn_done:
                return []
            reason = StopReason.ERROR if self._error else StopReason.END_TURN
            return [self._end(reason, obj)]
        return [UnknownEvent(vendor_type=str(kind), raw=obj)]

    @total
    def finish(self, exit_code: int | None = None, stderr_tail: str = "") -> list[Event]:
        """The process exited: end the turn if no terminal step or ``done`` did."""
        if self.turn_done:
            return []
        if exit_code == 0 and self._error is None:
            return [self._end(StopReason.END_TURN, None)]
        message = self._error or f"opencode run exited with code {exit_code}"
        if self._error is None and stderr_tail.strip():
            message = f"{message}: {stderr_tail.strip()[-1000:]}"
        self._error = message
        return [self._end(StopReason.ERROR, None)]

    # ── helpers ──
    def _end(self, reason: StopReason, raw: Any) -> TurnCompleted:
        self.turn_done = True
        error = self._error if reason is StopReason.ERROR else None
        return TurnCompleted(stop_reason=reason, error=error, result_text=self._last_text, raw=raw)

    def _text(self, part: dict[str, Any], obj: dict[str, Any]) -> list[Event]:
        text = part.get("text")
        if not isinstance(text, str):
            return [UnknownEvent(vendor_type="text", raw=obj)]
        mid = _message_id(part)
        self._last_text = text
        return [
            TextDelta(text=text, message_id=mid, raw=obj),
            TextComplete(text=text, message_id=mid, raw=obj),
        ]

    @staticmethod
    def _reasoning(part: dict[str, Any], obj: dict[str, Any]) -> list[Event]:
        text = part.get("text")
        if not isinstance(text, str):
            return [UnknownEvent(vendor_type="reasoning", raw=obj)]
        mid = _message_id(part)
        return [
            ReasoningDelta(text=text, message_id=mid, raw=obj),
            ReasoningComplete(text=text, message_id=mid, raw=obj),
        ]

    def _step_finish(self, part: dict[str, Any], obj: dict[str, Any]) -> list[Event]:
        events: list[Event] = []
        tokens = mapping(part.get("tokens"))
        if tokens:
            cache = mapping(tokens.get("cache"))
            cost = part.get("cost")
            events.append(
                Usage(
                    input_tokens=_int(tokens.get("input")),
                    output_tokens=_int(tokens.get("output")),
                    reasoning_tokens=_int(tokens.get("reasoning")),
                    cache_read_tokens=_int(cache.get("read")),
                    cache_write_tokens=_int(cache.get("write")),
                    cost_usd=float(cost) if isinstance(cost, int | float) else None,
                    raw=obj,
                )
            )
        reason = _TERMINAL.get(str(part.get("reason")))
        if reason is not None and not self.turn_done:
            events.append(self._end(reason, obj))
        return events


def _message_id(part: dict[str, Any]) -> str | None:
    mid = part.get("messageID") or part.get("id")
    return mid if isinstance(mid, str) else None
