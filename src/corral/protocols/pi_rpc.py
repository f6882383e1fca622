"""Pi RPC (``pi --mode rpc``): stdout JSON lines → corral events. Synchronous and I/O-free.

The driver hands every stdout object to :meth:`PiRpcParser.feed` and every command it wrote to
:meth:`PiRpcParser.feed_sent`, so a recorded transcript replays through the live code path.

Mapping (verified on pi 0.73.1; see docs/protocols/pi.md):

* ``agent_start`` → ``StatusChanged("busy")``; ``agent_end`` → ``TurnCompleted`` (``cancelled``
  when the last assistant message stopped ``aborted`` or we sent ``abort``; ``error`` with its
  ``errorMessage``; ``max_tokens`` for ``length``). Pi's own ``turn_start``/``turn_end`` are model
  round trips inside one corral turn; a steering message is answered inside the same agent run.
* ``message_update`` ``text_delta``/``thinking_delta`` → deltas; ``text_end``/``thinking_end`` →
  ``…Complete``; assistant ``message_end`` → ``Usage`` (tokens and ``cost.total``).
* ``tool_execution_start/update/end`` → ``ToolCallStarted``/``Updated`` (output delta from the
  accumulated ``partialResult``)/``Completed`` or ``Failed``; ``write``/``edit`` → ``FileDiff``.
* ``auto_compaction_*``/``compaction_*`` and ``auto_retry_*`` → status changes and warnings;
  ``extension_error`` → ``Warning``; a failed command ``response`` → ``Error``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..events import (
    ErrorEvent,
    Event,
    FileDiff,
    ReasoningComplete,
    ReasoningDelta,
    StatusChanged,
    StopReason,
    TextComplete,
    TextDelta,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallStarted,
    ToolCallUpdated,
    ToolKind,
    ToolResult,
    TurnCompleted,
    UnknownEvent,
    Usage,
    WarningEvent,
)
from ..events._text import SurrogateJoiner
from ._total import total

_KINDS = {
    "write": ToolKind.EDIT,
    "edit": ToolKind.EDIT,
    "read": ToolKind.READ,
    "ls": ToolKind.READ,
    "grep": ToolKind.SEARCH,
    "find": ToolKind.SEARCH,
    "bash": ToolKind.COMMAND,
}
_IGNORED = frozenset({"turn_start", "turn_end", "queue_update", "session"})
_STOP = {"length": StopReason.MAX_TOKENS, "aborted": StopReason.CANCELLED}


@dataclass
class _Turn:
    open: bool = False
    started: bool = False
    interrupted: bool = False
    stop: str | None = None
    error: str | None = None
    text: str | None = None
    index: int = 0
    messages: int = 0


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(c.get("text", ""))
            for c in content
            if isinstance(c, dict) and c.get("type") == "text"
        )
    return ""


class PiRpcParser:
    def __init__(self) -> None:
        self.turn = _Turn()
        self.turns = 0
        self._tool_output: dict[str, str] = {}
        self._tool_args: dict[str, Any] = {}
        self.state: dict[str, Any] = {}
        self._joiner = SurrogateJoiner()
        """The last ``get_state`` answer (session file and id, model, thinking level…)."""

    @property
    def streaming(self) -> bool:
        return self.turn.open

    @total
    def feed_sent(self, command: Any) -> list[Event]:
        if not isinstance(command, dict):
            return []
        ctype = command.get("type")
        if ctype in ("prompt", "steer", "follow_up") and not self.turn.open:
            self.turns += 1
            self.turn = _Turn(open=True, index=self.turns)
        elif ctype == "abort" and self.turn.open:
            self.turn.interrupted = True
        return []

    @total
    def feed(self, obj: Any) -> list[Event]:
        if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
            return [UnknownEvent(raw=obj)]
        etype = obj["type"]
        if etype in _IGNORED:
            return []
        handler = _HANDLERS.get(etype)
        if handler is None:
            return [UnknownEvent(vendor_type=etype, raw=obj)]
        return handler(self, obj)

    @total
    def finish(self) -> list[Event]:
        if not self.turn.open:
            return []
        self.turn.open = False
        if self.turn.interrupted:
            return [TurnCompleted(stop_reason=StopReason.CANCELLED)]
        return [TurnCompleted(stop_reason=StopReason.ERROR, error="pi exited during the turn")]

    # ── handlers ──
    def _response(self, obj: dict[str, Any]) -> list[Event]:
        if obj.get("success") is False:
            if obj.get("command") in ("prompt", "steer", "follow_up") and not self.turn.started:
                self.turn.open = False
            return [
                ErrorEvent(
                    message=str(obj.get("error") or "command failed"),
                    code=obj.get("command"),
                    raw=obj,
                )
            ]
        if obj.get("command") == "get_state" and isinstance(obj.get("data"), dict):
            self.state = dict(obj["data"])
        return []

    def _agent_start(self, obj: dict[str, Any]) -> list[Event]:
        if not self.turn.open:
            self.turns += 1
            self.turn = _Turn(open=True, index=self.turns)
        self.turn.started = True
        return [StatusChanged(status="busy", raw=obj)]

    def _agent_end(self, obj: dict[str, Any]) -> list[Event]:
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
                raw=obj,
            )
        ]

    def _message_update(self, obj: dict[str, Any]) -> list[Event]:
        ev = obj.get("assistantMessageEvent")
        if not isinstance(ev, dict):
            return []
        kind, mid = ev.get("type"), self._message_id()
        if kind == "text_delta" and isinstance(ev.get("delta"), str):
            text = self._joiner.join(ev["delta"], (mid, "text"))
            return [TextDelta(text=text, message_id=mid, raw=obj)]
        if kind == "thinking_delta" and isinstance(ev.get("delta"), str):
            text = self._joiner.join(ev["delta"], (mid, "thinking"))
            return [ReasoningDelta(text=text, message_id=mid, raw=obj)]
        if kind == "text_end":
            text = str(ev.get("content") or "")
            self.turn.text = text
            return [TextComplete(text=text, message_id=mid, raw=obj)]
        if kind == "thinking_end":
            return [ReasoningComplete(text=str(ev.get("content") or ""), message_id=mid, raw=obj)]
        if kind == "error":
            self.turn.stop = str(ev.get("reason") or "error")
        return []

    def _message_id(self) -> str:
        return f"turn-{self.turn.index}.{self.turn.messages}"

    def _message_start(self, obj: dict[str, Any]) -> list[Event]:
        msg = obj.get("message")
        if isinstance(msg, dict) and msg.get("role") == "assistant":
            self.turn.messages += 1
        return []

    def _message_end(self, obj: dict[str, Any]) -> list[Event]:
        msg = obj.get("message")
        if not isinstance(msg, dict) or msg.get("role") != "assistant":
            return []
        stop = msg.get("stopReason")
        if isinstance(stop, str):
            self.turn.stop = stop
        if isinstance(msg.get("errorMessage"), str):
            self.turn.error = msg["errorMessage"]
        usage = msg.get("usage")
        if not isinstance(usage, dict):
            return []
        cost = usage.get("cost") if isinstance(usage.get("cost"), dict) else {}
        assert isinstance(cost, dict)
        total = cost.get("total")
        return [
            Usage(
                input_tokens=_int(usage.get("input")),
                output_tokens=_int(usage.get("output")),
                cache_read_tokens=_int(usage.get("cacheRead")),
                cache_write_tokens=_int(usage.get("cacheWrite")),
                cost_usd=float(total) if isinstance(total, int | float) else None,
                model=msg.get("model") if isinstance(msg.get("model"), str) else None,
                raw=obj,
            )
        ]

    def _tool_start(self, obj: dict[str, Any]) -> list[Event]:
        call_id, name, args = str(obj.get("toolCallId")), str(obj.get("toolName")), obj.get("args")
        self._tool_args[call_id] = args
        self._tool_output[call_id] = ""
        kind = _KINDS.get(name, ToolKind.OTHER)
        return [
            ToolCallStarted(
                call_id=call_id,
                name=name,
                kind=kind,
                input=args,
                file=_arg(args, "path"),
                cmd=_arg(args, "command"),
                raw=obj,
            )
        ]

    def _tool_update(self, obj: dict[str, Any]) -> list[Event]:
        call_id = str(obj.get("toolCallId"))
        partial = obj.get("partialResult")
        text = _text_of(partial.get("content")) if isinstance(partial, dict) else ""
        seen = self._tool_output.get(call_id, "")
        # partialResult is cumulative: send only what is new (or everything, if it was replaced).
        delta = text[len(seen) :] if text.startswith(seen) else text
        self._tool_output[call_id] = text
        if not delta:
            return []
        return [ToolCallUpdated(call_id=call_id, output_delta=delta, status="running", raw=obj)]

    def _tool_end(self, obj: dict[str, Any]) -> list[Event]:
        call_id, name = str(obj.get("toolCallId")), str(obj.get("toolName"))
        result = obj.get("result") if isinstance(obj.get("result"), dict) else {}
        assert isinstance(result, dict)
        output = _text_of(result.get("content"))
        kind = _KINDS.get(name, ToolKind.OTHER)
        args = self._tool_args.pop(call_id, None)
        self._tool_output.pop(call_id, None)
        details = result.get("details")
        if obj.get("isError"):
            return [
                ToolCallFailed(
                    call_id=call_id,
                    error=output or "tool failed",
                    result=ToolResult(output=output, structured=details, is_error=True),
                    name=name,
                    kind=kind,
                    raw=obj,
                )
            ]
        out: list[Event] = [
            ToolCallCompleted(
                call_id=call_id,
                result=ToolResult(output=output, structured=details),
                name=name,
                kind=kind,
                raw=obj,
            )
        ]
        path = _arg(args, "path")
        if kind is ToolKind.EDIT and path:
            diff = details.get("diff") if isinstance(details, dict) else None
            new_text = _arg(args, "content") if name == "write" else None
            out.append(
                FileDiff(
                    path=path,
                    diff=diff if isinstance(diff, str) else None,
                    new_text=new_text,
                    call_id=call_id,
                    raw=obj,
                )
            )
        return out

    def _compaction(self, obj: dict[str, Any]) -> list[Event]:
        if obj["type"].endswith("_start"):
            return [StatusChanged(status="compacting", message=obj.get("reason"), raw=obj)]
        if obj.get("errorMessage") or obj.get("aborted"):
            message = str(obj.get("errorMessage") or "compaction aborted")
            return [WarningEvent(message=message, code="compaction", raw=obj)]
        return [StatusChanged(status="compacted", raw=obj)]

    def _retry(self, obj: dict[str, Any]) -> list[Event]:
        if obj["type"] == "auto_retry_start":
            message = (
                f"retry {obj.get('attempt')}/{obj.get('maxAttempts')}: {obj.get('errorMessage')}"
            )
            return [StatusChanged(status="retry", message=message, raw=obj)]
        if obj.get("success") is False:
            return [
                WarningEvent(
                    message=str(obj.get("finalError") or "retries exhausted"), code="retry", raw=obj
                )
            ]
        return []

    def _extension_error(self, obj: dict[str, Any]) -> list[Event]:
        return [WarningEvent(message=str(obj.get("error")), code="extension_error", raw=obj)]


def _arg(args: Any, key: str) -> str | None:
    value = args.get(key) if isinstance(args, dict) else None
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) else None


_HANDLERS = {
    "response": PiRpcParser._response,
    "agent_start": PiRpcParser._agent_start,
    "agent_end": PiRpcParser._agent_end,
    "message_start": PiRpcParser._message_start,
    "message_update": PiRpcParser._message_update,
    "message_end": PiRpcParser._message_end,
    "tool_execution_start": PiRpcParser._tool_start,
    "tool_execution_update": PiRpcParser._tool_update,
    "tool_execution_end": PiRpcParser._tool_end,
    "auto_compaction_start": PiRpcParser._compaction,
    "auto_compaction_end": PiRpcParser._compaction,
    "compaction_start": PiRpcParser._compaction,
    "compaction_end": PiRpcParser._compaction,
    "auto_retry_start": PiRpcParser._retry,
    "auto_retry_end": PiRpcParser._retry,
    "extension_error": PiRpcParser._extension_error,
}
