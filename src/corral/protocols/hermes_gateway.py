"""Hermes TUI gateway (``python -m tui_gateway.entry``): JSON-RPC lines → corral events.

Synchronous and I/O-free. The driver (:mod:`corral.adapters.hermes_gateway`) hands every message
the gateway printed to :meth:`HermesGatewayParser.feed` and every request it wrote to
:meth:`HermesGatewayParser.feed_sent`, so a recorded transcript replays through the live path.

The gateway speaks JSON-RPC 2.0 over stdio; everything it streams is one notification,
``{"method": "event", "params": {"type", "session_id", "payload"}}``. Mapping (read from and
verified on hermes-agent 0.19.0, ``tui_gateway/server.py``; docs/protocols/hermes-gateway.md):

* ``message.start`` → ``StatusChanged("busy")`` (opens a turn the gateway started itself, e.g. a
  prompt it had queued); ``message.delta`` → ``TextDelta``; ``reasoning.delta`` →
  ``ReasoningDelta``; ``message.complete`` → ``TextComplete``, ``Usage`` (its ``usage``) and
  ``TurnCompleted`` (``status``: ``complete`` → end_turn, ``interrupted`` → cancelled, ``error``
  → error). ``error`` (agent build or turn crash, no ``message.complete`` follows) → ``Error``
  and, in a turn, ``TurnCompleted(error)``.
* ``tool.start`` → ``ToolCallStarted`` (no arguments yet: only a one-line ``context``);
  ``tool.complete`` → ``ToolCallCompleted`` with the arguments and result, ``ToolCallFailed``
  (``denied`` when the result says ``status: blocked``), and ``FileDiff`` for ``write_file`` /
  ``patch``.
* ``approval.request`` (the gateway's dangerous-command prompt; it carries no id: one approval
  is pending per session) → ``ApprovalRequested`` with an id minted here and one option per
  ``choices`` entry. ``clarify.request`` → ``QuestionAsked`` (its ``request_id``).
* ``status.update`` → ``StatusChanged(kind)``; ``thinking.delta`` (the spinner's kaomoji),
  ``reasoning.available`` (a copy of text already streamed), ``session.info``, ``session.title``,
  ``tool.generating``, ``skin.changed``, ``gateway.ready`` … carry nothing corral shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..events import (
    ErrorEvent,
    Event,
    Question,
    QuestionAsked,
    ReasoningDelta,
    StatusChanged,
    StopReason,
    TextComplete,
    TextDelta,
    ToolCallStarted,
    ToolKind,
    TurnCompleted,
    UnknownEvent,
    Usage,
)
from ..events._text import SurrogateJoiner
from ._hermes_gateway_tools import (
    KINDS,
    approval_choices,
    approval_requested,
    tool_completed,
)
from ._total import mapping, sequence, text_or_none, total

_IGNORED = frozenset(
    {
        "gateway.ready",
        "session.info",
        "session.title",
        "thinking.delta",
        "reasoning.available",
        "tool.generating",
        "skin.changed",
        "voice.status",
        "voice.transcript",
        "reaction",
        "browser.progress",
        "terminal.close",
    }
)
_STOPS = {
    "complete": StopReason.END_TURN,
    "interrupted": StopReason.CANCELLED,
    "error": StopReason.ERROR,
}
_PROMPTS = frozenset({"prompt.submit"})


@dataclass
class _Turn:
    open: bool = False
    index: int = 0
    interrupted: bool = False
    messages: int = 0


@dataclass
class PendingApproval:
    """An approval the gateway waits for (one per session)."""

    request_id: str
    choices: tuple[str, ...]
    call_id: str | None = None


@dataclass
class _State:
    tools: dict[str, str] = field(default_factory=dict)
    """Open tool calls: id → name."""
    last_tool: str | None = None


class HermesGatewayParser:
    def __init__(self) -> None:
        self.turn = _Turn()
        self.turns = 0
        self.session_id: str | None = None
        """The gateway's live session id (``session.create`` / ``session.resume`` result)."""
        self.stored_session_id: str | None = None
        """The id Hermes persists (``state.db``), what ``session.resume`` takes."""
        self.info: dict[str, Any] = {}
        """The last ``session.info`` payload (model, tools, usage…)."""
        self.idle = True
        """False from a prompt until the ``session.info`` the gateway sends once the turn's
        thread let go of the session (a prompt sent before that is queued behind it)."""
        self.approval: PendingApproval | None = None
        self._approvals = 0
        self._state = _State()
        self._joiner = SurrogateJoiner()

    @property
    def streaming(self) -> bool:
        return self.turn.open

    # ── what corral wrote ──
    @total
    def feed_sent(self, message: Any) -> list[Event]:
        msg = mapping(message)
        method = msg.get("method")
        if method in _PROMPTS and not self.turn.open:
            self._open()
        elif method == "session.interrupt" and self.turn.open:
            self.turn.interrupted = True
        elif method == "approval.respond":
            self.approval = None
        return []

    # ── what the gateway printed ──
    @total
    def feed(self, message: Any) -> list[Event]:
        msg = mapping(message)
        if "method" not in msg:
            return self._response(msg)
        if msg.get("method") != "event":
            return [UnknownEvent(vendor_type=text_or_none(msg.get("method")), raw=message)]
        params = mapping(msg.get("params"))
        etype = text_or_none(params.get("type"))
        if etype is None:
            return [UnknownEvent(raw=message)]
        if etype == "session.info":
            self.info = mapping(params.get("payload"))
            if not self.turn.open:
                self.idle = True
            return []
        if etype in _IGNORED:
            return []
        handler = _HANDLERS.get(etype)
        if handler is None:
            return [UnknownEvent(vendor_type=etype, raw=message)]
        return handler(self, mapping(params.get("payload")), message)

    @total
    def finish(self) -> list[Event]:
        """The gateway's output ended: close the turn it left open."""
        if not self.turn.open:
            return []
        turn, self.turn = self.turn, _Turn()
        if turn.interrupted:
            return [TurnCompleted(stop_reason=StopReason.CANCELLED, turn_id=str(turn.index))]
        return [
            TurnCompleted(
                stop_reason=StopReason.ERROR,
                turn_id=str(turn.index),
                error="the Hermes gateway exited during the turn",
            )
        ]

    @total
    def submit_failed(self, message: str) -> list[Event]:
        """The gateway answered ``prompt.submit`` with an error: the turn it opened is over."""
        if not self.turn.open:
            return []
        turn, self.turn = self.turn, _Turn()
        self.idle = True
        return [
            ErrorEvent(message=message, code="prompt.submit"),
            TurnCompleted(stop_reason=StopReason.ERROR, turn_id=str(turn.index), error=message),
        ]

    # ── handlers ──
    def _open(self) -> None:
        self.turns += 1
        self.turn = _Turn(open=True, index=self.turns)
        self.idle = False

    def _response(self, msg: dict[str, Any]) -> list[Event]:
        result = mapping(msg.get("result"))
        sid, stored = text_or_none(result.get("session_id")), result.get("stored_session_id")
        if sid and ("info" in result or "message_count" in result):
            self.session_id = sid
            self.stored_session_id = text_or_none(stored) or self.stored_session_id
        return []

    def _message_id(self) -> str:
        return f"turn-{self.turn.index}.{self.turn.messages}"

    def _message_start(self, payload: dict[str, Any], raw: Any) -> list[Event]:
        if not self.turn.open:
            self._open()
        self.turn.messages += 1
        return [StatusChanged(status="busy", raw=raw)]

    def _delta(self, payload: dict[str, Any], raw: Any) -> list[Event]:
        text = text_or_none(payload.get("text"))
        if not text:
            return []
        mid = self._message_id()
        return [TextDelta(text=self._joiner.join(text, (mid, "text")), message_id=mid, raw=raw)]

    def _reasoning(self, payload: dict[str, Any], raw: Any) -> list[Event]:
        text = text_or_none(payload.get("text"))
        if not text:
            return []
        mid = self._message_id()
        joined = self._joiner.join(text, (mid, "reasoning"))
        return [ReasoningDelta(text=joined, message_id=mid, raw=raw)]

    def _complete(self, payload: dict[str, Any], raw: Any) -> list[Event]:
        turn = self.turn if self.turn.open else _Turn(index=self.turns)
        self.turn = _Turn()
        text = text_or_none(payload.get("text")) or ""
        status = text_or_none(payload.get("status")) or "complete"
        reason = _STOPS.get(status, StopReason.END_TURN)
        if turn.interrupted and reason is StopReason.END_TURN:
            reason = StopReason.CANCELLED
        out: list[Event] = []
        if text and reason is not StopReason.ERROR:
            out.append(TextComplete(text=text, message_id=self._message_id(), raw=raw))
        usage = mapping(payload.get("usage"))
        if usage:
            out.append(
                Usage(
                    input_tokens=_int(usage.get("input")),
                    output_tokens=_int(usage.get("output")),
                    reasoning_tokens=_int(usage.get("reasoning")) or None,
                    model=text_or_none(usage.get("model")),
                    raw=raw,
                )
            )
        out.append(
            TurnCompleted(
                stop_reason=reason,
                turn_id=str(turn.index) if turn.index else None,
                error=(text or "the turn failed") if reason is StopReason.ERROR else None,
                result_text=text or None,
                raw=raw,
            )
        )
        self._state = _State()
        self.approval = None
        return out

    def _error(self, payload: dict[str, Any], raw: Any) -> list[Event]:
        message = text_or_none(payload.get("message")) or "the Hermes gateway reported an error"
        out: list[Event] = [ErrorEvent(message=message, raw=raw)]
        if self.turn.open:
            turn, self.turn = self.turn, _Turn()
            self.idle = True
            stop = StopReason.CANCELLED if turn.interrupted else StopReason.ERROR
            out.append(
                TurnCompleted(
                    stop_reason=stop,
                    turn_id=str(turn.index),
                    error=message if stop is StopReason.ERROR else None,
                )
            )
        return out

    def _tool_start(self, payload: dict[str, Any], raw: Any) -> list[Event]:
        call_id = text_or_none(payload.get("tool_id")) or f"tool-{len(self._state.tools)}"
        name = text_or_none(payload.get("name")) or "tool"
        self._state.tools[call_id] = name
        self._state.last_tool = call_id
        return [
            ToolCallStarted(
                call_id=call_id,
                name=name,
                kind=KINDS.get(name, ToolKind.OTHER),
                title=text_or_none(payload.get("context")),
                raw=raw,
            )
        ]

    def _tool_complete(self, payload: dict[str, Any], raw: Any) -> list[Event]:
        call_id = text_or_none(payload.get("tool_id")) or self._state.last_tool or "tool"
        name = text_or_none(payload.get("name")) or self._state.tools.get(call_id) or "tool"
        self._state.tools.pop(call_id, None)
        return tool_completed(call_id, name, payload, raw)

    def _approval(self, payload: dict[str, Any], raw: Any) -> list[Event]:
        self._approvals += 1
        request_id = f"approval-{self._approvals}"
        choices = approval_choices(payload)
        call_id = self._state.last_tool
        self.approval = PendingApproval(request_id, choices, call_id)
        tool = self._state.tools.get(call_id or "", "terminal")
        return [
            approval_requested(
                request_id, payload, choices=choices, call_id=call_id, tool_name=tool, raw=raw
            )
        ]

    def _clarify(self, payload: dict[str, Any], raw: Any) -> list[Event]:
        request_id = text_or_none(payload.get("request_id"))
        if not request_id:
            return [UnknownEvent(vendor_type="clarify.request", raw=raw)]
        options = tuple(str(c) for c in sequence(payload.get("choices")) if type(c) is str)
        question = text_or_none(payload.get("question")) or ""
        return [
            QuestionAsked(
                request_id=request_id,
                questions=(Question(question=question, options=options),),
                call_id=self._state.last_tool,
                raw=raw,
            )
        ]

    def _status(self, payload: dict[str, Any], raw: Any) -> list[Event]:
        kind = text_or_none(payload.get("kind")) or "status"
        return [StatusChanged(status=kind, message=text_or_none(payload.get("text")), raw=raw)]


def _int(value: Any) -> int | None:
    return int(value) if type(value) in (int, float) else None


_HANDLERS = {
    "message.start": HermesGatewayParser._message_start,
    "message.delta": HermesGatewayParser._delta,
    "reasoning.delta": HermesGatewayParser._reasoning,
    "message.complete": HermesGatewayParser._complete,
    "error": HermesGatewayParser._error,
    "tool.start": HermesGatewayParser._tool_start,
    "tool.complete": HermesGatewayParser._tool_complete,
    "approval.request": HermesGatewayParser._approval,
    "clarify.request": HermesGatewayParser._clarify,
    "status.update": HermesGatewayParser._status,
}
