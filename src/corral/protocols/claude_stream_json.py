"""Parser for Claude Code's stream-json protocol (``--output-format stream-json``), also spoken by
Qwen Code. Synchronous and I/O-free: a recorded transcript is all a test needs.

* ``feed(obj)`` takes one decoded line the CLI printed and returns the normalized events.
* ``feed_sent(obj)`` takes one line *we* wrote to the CLI (control responses answering permission
  requests); it yields ``ApprovalResolved`` / ``QuestionAnswered`` and remembers denials, so a denied
  tool's result becomes ``ToolCallFailed(denied=True)``.
* ``finish()`` closes what is still open when the stream ends (a turn without its ``result``).

Text arrives twice when partial messages are on: as ``stream_event`` deltas (→ ``TextDelta``) and as
the complete ``assistant`` message (→ ``TextComplete``). Sub-agent traffic carries
``parent_tool_use_id``, kept as ``parent_call_id``; it is not streamed, so it has no deltas.
Observed in 2.1.197: ``assistant`` lines carry one content block each (several lines share a
message id), ``system/init`` is printed at the start of every turn, and an interrupted turn ends
with ``result`` subtype ``error_during_execution`` and ``terminal_reason: aborted_streaming`` (or
``aborted_tools``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..events import (
    ErrorEvent,
    Event,
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
from ._claude_control import ControlMixin
from ._claude_tools import (
    assistant_error_text,
    exit_code,
    file_diff,
    result_text,
    tool_cmd,
    tool_file,
    tool_kind,
    tool_title,
)
from ._total import mapping, text_or_none, total

_CANCELLED_TERMINALS = frozenset({"aborted_streaming", "aborted_tools", "interrupted", "cancelled"})
_STOP_REASONS = {
    "max_tokens": StopReason.MAX_TOKENS,
    "refusal": StopReason.REFUSAL,
}
_RESULT_SUBTYPES = {
    "error_max_turns": StopReason.MAX_TURNS,
    "error_max_budget_usd": StopReason.MAX_TURNS,
}
_QUIET_STREAM_EVENTS = frozenset({"content_block_stop", "message_delta", "message_stop"})
"""Stream events that carry nothing the complete ``assistant`` / ``result`` lines do not repeat."""
_SILENT_SYSTEM = frozenset(
    {"hook_started", "hook_progress", "hook_response", "files_persisted", "thinking_tokens"}
)
_TASK_SYSTEM = frozenset({"task_started", "task_progress", "task_updated", "task_notification"})


class _Call(msgspec.Struct):
    name: str
    kind: ToolKind
    input: Any = None
    parent: str | None = None


class ClaudeStreamParser(ControlMixin):
    """Stateful translator from stream-json lines to corral events (one instance per session)."""

    def __init__(self) -> None:
        self.session_id: str | None = None
        self.model: str | None = None
        self.version: str | None = None
        self.slash_commands: tuple[str, ...] = ()
        self.permission_mode: str | None = None
        self._calls: dict[str, _Call] = {}
        self._blocks: dict[int, dict[str, Any]] = {}
        self._message_id: str | None = None
        self._requests: dict[str, dict[str, Any]] = {}
        self._denied: set[str] = set()
        self._tasks: dict[str, str] = {}
        self._raw_commands: list[Any] = []
        self._turn_open = False
        self._joiner = SurrogateJoiner()

    # ── lines from the CLI ──
    @total
    def feed(self, obj: Any) -> list[Event]:
        if type(obj) is not dict:
            return [UnknownEvent(raw=obj)]
        kind = obj.get("type")
        sid = obj.get("session_id")
        if sid and sid != self.session_id and isinstance(sid, str):
            self.session_id = sid
        handler = _HANDLERS.get(kind) if kind.__class__ is str else None
        if handler is None:
            return [UnknownEvent(raw=obj, vendor_type=kind if isinstance(kind, str) else None)]
        return handler(self, obj)

    @total
    def finish(self) -> list[Event]:
        events: list[Event] = []
        if self._turn_open:
            self._turn_open = False
            message = "the agent's output ended in the middle of a turn"
            events.append(ErrorEvent(message=message, code="early_eof", fatal=True))
            events.append(TurnCompleted(stop_reason=StopReason.ERROR, error=message))
        return events

    def cancel_turn(self) -> list[Event]:
        """End the open turn as ``cancelled`` (the CLI died on our interrupt before saying so)."""
        if not self._turn_open:
            return []
        self._turn_open = False
        self._requests.clear()
        return [TurnCompleted(stop_reason=StopReason.CANCELLED)]

    # ── lines we sent ──
    @property
    def turn_open(self) -> bool:
        """A prompt was sent (or a turn began) and its ``result`` has not arrived yet."""
        return self._turn_open

    def _system(self, obj: dict[str, Any]) -> list[Event]:
        subtype = obj.get("subtype")
        if subtype == "init":
            self._turn_open = True
            self.model = obj.get("model") or self.model
            self.version = (
                obj.get("claude_code_version") or obj.get("qwen_code_version") or self.version
            )
            cmds = obj.get("slash_commands")
            if isinstance(cmds, list) and cmds != self._raw_commands:  # init repeats every turn
                self._raw_commands = cmds
                self.slash_commands = tuple([f"/{c}" for c in cmds if isinstance(c, str)])
            self.permission_mode = obj.get("permissionMode") or obj.get("permission_mode")
            return [StatusChanged(status="ready", message=self.model, raw=obj)]
        if subtype == "status":
            status = obj.get("status")
            if obj.get("permissionMode"):
                self.permission_mode = obj["permissionMode"]
            return [StatusChanged(status=status if isinstance(status, str) else "idle", raw=obj)]
        if subtype == "api_retry":
            return [
                WarningEvent(
                    message=f"retrying the model request (attempt {obj.get('attempt')}): {obj.get('error')}",
                    code="api_retry",
                    raw=obj,
                )
            ]
        if subtype == "compact_boundary":
            return [StatusChanged(status="compacted", raw=obj)]
        if subtype == "informational":
            return [
                WarningEvent(message=str(obj.get("content", "")), code=obj.get("level"), raw=obj)
            ]
        if not isinstance(subtype, str):
            return [UnknownEvent(raw=obj, vendor_type="system")]
        if subtype in _SILENT_SYSTEM:
            return []
        if subtype in _TASK_SYSTEM:
            return self._task(obj, subtype)
        return [UnknownEvent(raw=obj, vendor_type=f"system/{subtype}")]

    def _task(self, obj: dict[str, Any], subtype: str) -> list[Event]:
        """Background tasks and sub-agents: progress of the tool call that started them."""
        task_id = obj.get("task_id")
        call_id = obj.get("tool_use_id")
        if isinstance(task_id, str):
            if isinstance(call_id, str):
                self._tasks[task_id] = call_id
            else:
                call_id = self._tasks.get(task_id)
        if subtype == "task_started":
            status = "running"
        elif subtype == "task_updated":
            status = str(mapping(obj.get("patch")).get("status") or "running")
        elif subtype == "task_notification":
            status = str(obj.get("status") or "completed")
        else:
            status = "running"
        if not isinstance(call_id, str):
            return [
                StatusChanged(
                    status=subtype, message=obj.get("description") or obj.get("summary"), raw=obj
                )
            ]
        title = obj.get("description") if subtype == "task_started" else None
        return [ToolCallUpdated(call_id=call_id, status=status, title=title, raw=obj)]

    def _stream_event(self, obj: dict[str, Any]) -> list[Event]:
        event = obj.get("event")
        if type(event) is not dict:
            event = {}
        etype = event.get("type")
        if etype == "content_block_delta":  # most lines: go straight to them
            return self._delta(obj, event)
        if not isinstance(etype, str):
            return [UnknownEvent(raw=obj, vendor_type="stream_event")]
        if etype in _QUIET_STREAM_EVENTS:
            return []
        parent = obj.get("parent_tool_use_id")
        if etype == "message_start":
            self._message_id = mapping(event.get("message")).get("id")
            self._blocks.clear()
            return []
        if etype == "content_block_start":
            block = mapping(event.get("content_block"))
            index = event.get("index", 0)
            self._blocks[index if type(index) is int else 0] = block
            if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                return self._start_call(block["id"], block.get("name", "?"), None, parent, obj)
            return []
        return [UnknownEvent(raw=obj, vendor_type=f"stream_event/{etype}")]

    def _delta(self, obj: dict[str, Any], event: dict[str, Any]) -> list[Event]:
        delta = event.get("delta")
        if type(delta) is not dict:
            return []
        dtype = delta.get("type")
        if dtype == "text_delta":
            message_id = self._message_id
            return [
                TextDelta(
                    text=self._joiner.join(delta.get("text"), (message_id, "text")),
                    message_id=message_id,
                    parent_call_id=obj.get("parent_tool_use_id"),
                    raw=obj,
                )
            ]
        if dtype == "thinking_delta":
            message_id = self._message_id
            return [
                ReasoningDelta(
                    text=self._joiner.join(delta.get("thinking"), (message_id, "thinking")),
                    message_id=message_id,
                    parent_call_id=obj.get("parent_tool_use_id"),
                    raw=obj,
                )
            ]
        # input_json_delta and signature_delta: the complete assistant message carries the result.
        return []

    def _start_call(
        self, call_id: str, name: str, tool_input: Any, parent: str | None, raw: Any
    ) -> list[Event]:
        if call_id in self._calls:
            return []
        kind = tool_kind(name, tool_input)
        self._calls[call_id] = _Call(name=name, kind=kind, input=tool_input, parent=parent)
        return [
            ToolCallStarted(
                call_id=call_id,
                name=name,
                kind=kind,
                title=tool_title(name, tool_input) if tool_input else name,
                input=tool_input,
                file=tool_file(tool_input),
                cmd=tool_cmd(tool_input),
                parent_call_id=parent,
                raw=raw,
            )
        ]

    def _assistant(self, obj: dict[str, Any]) -> list[Event]:
        message = mapping(obj.get("message"))
        parent = obj.get("parent_tool_use_id")
        msg_id = message.get("id")
        events: list[Event] = []
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            btype = block.get("type") if isinstance(block, dict) else None
            if btype == "text":
                events.append(
                    TextComplete(
                        text=block.get("text", ""),
                        message_id=msg_id,
                        parent_call_id=parent,
                        raw=obj,
                    )
                )
            elif btype == "thinking":
                events.append(
                    ReasoningComplete(
                        text=block.get("thinking", ""),
                        message_id=msg_id,
                        parent_call_id=parent,
                        raw=obj,
                    )
                )
            elif btype in ("tool_use", "server_tool_use") and isinstance(block.get("id"), str):
                call_id, name, tool_input = block["id"], block.get("name", "?"), block.get("input")
                if call_id in self._calls:
                    call = self._calls[call_id]
                    call.input = tool_input
                    call.kind = tool_kind(name, tool_input)
                    events.append(
                        ToolCallUpdated(
                            call_id=call_id,
                            input=tool_input,
                            title=tool_title(name, tool_input),
                            file=tool_file(tool_input),
                            cmd=tool_cmd(tool_input),
                            parent_call_id=parent,
                            raw=obj,
                        )
                    )
                else:
                    events += self._start_call(call_id, name, tool_input, parent, obj)
            elif btype == "redacted_thinking":
                continue
            else:
                events.append(UnknownEvent(raw=obj, vendor_type=f"assistant/{btype}"))
        error = obj.get("error")
        if isinstance(error, str):
            events.append(
                ErrorEvent(message=assistant_error_text(message) or error, code=error, raw=obj)
            )
        return events

    def _user(self, obj: dict[str, Any]) -> list[Event]:
        content = mapping(obj.get("message")).get("content")
        if not isinstance(content, list):
            return []
        events: list[Event] = []
        structured = obj.get("tool_use_result")
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        for block in results:
            call_id = block.get("tool_use_id")
            if not isinstance(call_id, str):
                continue
            call = self._calls.pop(call_id, None)
            output = result_text(block.get("content"))
            is_error = bool(block.get("is_error"))
            struct = structured if len(results) == 1 else None
            result = ToolResult(
                output=output, structured=struct, is_error=is_error, exit_code=exit_code(struct)
            )
            name = call.name if call else None
            kind = call.kind if call else None
            parent = call.parent if call else obj.get("parent_tool_use_id")
            if is_error:
                denied = call_id in self._denied
                self._denied.discard(call_id)
                events.append(
                    ToolCallFailed(
                        call_id=call_id,
                        error=output,
                        denied=denied,
                        result=result,
                        name=name,
                        kind=kind,
                        parent_call_id=parent,
                        raw=obj,
                    )
                )
                continue
            events.append(
                ToolCallCompleted(
                    call_id=call_id,
                    result=result,
                    name=name,
                    kind=kind,
                    parent_call_id=parent,
                    raw=obj,
                )
            )
            if call is not None and call.kind is ToolKind.EDIT:
                diff = file_diff(call_id, call.name, call.input, struct, obj)
                if diff is not None:
                    events.append(diff)
        return events

    def _result(self, obj: dict[str, Any]) -> list[Event]:
        self._turn_open = False
        usage = mapping(obj.get("usage"))
        model_usage = obj.get("modelUsage")
        model = (
            next(iter(model_usage), None) if isinstance(model_usage, dict) and model_usage else None
        )
        events: list[Event] = [
            Usage(
                input_tokens=usage.get("input_tokens"),
                output_tokens=usage.get("output_tokens"),
                cache_read_tokens=usage.get("cache_read_input_tokens"),
                cache_write_tokens=usage.get("cache_creation_input_tokens"),
                cost_usd=obj.get("total_cost_usd"),
                model=model or self.model,
                raw=obj,
            )
        ]
        subtype = obj.get("subtype")
        error: str | None = None
        if text_or_none(obj.get("terminal_reason")) in _CANCELLED_TERMINALS:
            stop = StopReason.CANCELLED
        elif isinstance(subtype, str) and subtype in _RESULT_SUBTYPES:
            stop = _RESULT_SUBTYPES[subtype]
        elif obj.get("is_error") or (isinstance(subtype, str) and subtype.startswith("error")):
            stop = StopReason.ERROR
            errors = obj.get("errors")
            error = (
                "; ".join(str(e) for e in errors) if isinstance(errors, list) and errors else None
            ) or str(obj.get("result") or subtype)
        elif _is_text_api_error(obj.get("result"), usage):
            # Qwen Code reports a failed model call as answer text in a "success" result.
            stop = StopReason.ERROR
            error = str(obj["result"]).strip("[]")
            events.append(ErrorEvent(message=error, code="api_error", raw=obj))
        else:
            stop = _STOP_REASONS.get(
                text_or_none(obj.get("stop_reason")) or "", StopReason.END_TURN
            )
        result_text = obj.get("result")
        events.append(
            TurnCompleted(
                stop_reason=stop,
                error=error,
                result_text=result_text if isinstance(result_text, str) else None,
                raw=obj,
            )
        )
        return events

    def _rate_limit(self, obj: dict[str, Any]) -> list[Event]:
        info = mapping(obj.get("rate_limit_info"))
        status = info.get("status")
        if status == "allowed":
            return [StatusChanged(status="rate_limit", message=status, raw=obj)]
        return [WarningEvent(message=f"rate limit {status}", code="rate_limit", raw=obj)]

    def _ignore(self, obj: dict[str, Any]) -> list[Event]:
        return []


_HANDLERS = {
    "system": ClaudeStreamParser._system,
    "stream_event": ClaudeStreamParser._stream_event,
    "assistant": ClaudeStreamParser._assistant,
    "user": ClaudeStreamParser._user,
    "result": ClaudeStreamParser._result,
    "control_request": ControlMixin._control_request,
    "control_cancel_request": ControlMixin._control_cancel,
    "control_response": ClaudeStreamParser._ignore,
    "rate_limit_event": ClaudeStreamParser._rate_limit,
    "keep_alive": ClaudeStreamParser._ignore,
}


def _is_text_api_error(result: Any, usage: dict[str, Any]) -> bool:
    """``[API Error: …]`` as the whole answer of a turn that produced no tokens."""
    return (
        isinstance(result, str)
        and result.startswith("[API Error:")
        and result.endswith("]")
        and not usage.get("output_tokens")
    )
