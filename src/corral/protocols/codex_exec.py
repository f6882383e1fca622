"""``codex exec --json`` (one JSON object per stdout line) → corral events.

:class:`ExecParser` is synchronous and does no I/O: ``feed(obj)`` per decoded line, ``finish()``
when the process has exited. One process runs one turn::

    thread.started {thread_id}  → remembered (``thread_id``) for ``exec resume``
    turn.started                → StatusChanged(running)
    item.started / item.updated / item.completed {item: {type: snake_case, ...}}
    turn.completed {usage}      → Usage, TurnCompleted(end_turn)
    turn.failed {error}         → TurnCompleted(error)
    error {message}             → Error

exec streams no text deltas: an ``agent_message`` arrives whole in ``item.completed``; the parser
emits it as one ``TextDelta`` followed by ``TextComplete`` so consumers see the usual shape. Item
``error`` entries (e.g. codex 0.171's "Model metadata … not found") are warnings, not failures.
A turn with no ``turn.completed``/``turn.failed`` ends, in ``finish()``, with an error.
"""

from __future__ import annotations

from typing import Any

from ..events import (
    ErrorEvent,
    Event,
    FileDiff,
    PlanEntry,
    PlanUpdated,
    ReasoningComplete,
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
from ..events._fields import mark_part
from ._codex_vocab import command_kind
from ._total import mapping, sequence, total

__all__ = ["ExecParser"]


class ExecParser:
    def __init__(self) -> None:
        self.thread_id: str | None = None
        self.turn_done = False
        self._started: set[str] = set()
        self._last_text: str | None = None

    @total
    def feed(self, obj: dict[str, Any]) -> list[Event]:
        if type(obj) is not dict:
            return [UnknownEvent(raw=obj)]
        kind = obj.get("type")
        if kind == "item.completed" or kind == "item.started" or kind == "item.updated":
            item = obj.get("item")
            if type(item) is not dict:
                return [UnknownEvent(vendor_type=str(kind), raw=obj)]
            return self._item(kind, item, obj)
        if kind == "thread.started":
            self.thread_id = obj.get("thread_id", self.thread_id)
            return []
        if kind == "turn.started":
            return [StatusChanged(status="running", raw=obj)]
        if kind == "turn.completed":
            self.turn_done = True
            return [*self._usage(obj), self._end(StopReason.END_TURN, None, obj)]
        if kind == "turn.failed":
            self.turn_done = True
            err = mapping(obj.get("error"))
            message = err.get("message") if isinstance(err, dict) else str(err)
            return [self._end(StopReason.ERROR, message or "turn failed", obj)]
        if kind == "error":
            return [ErrorEvent(message=str(obj.get("message", "")), raw=obj)]
        return [UnknownEvent(vendor_type=str(kind), raw=obj)]

    @total
    def finish(self, exit_code: int | None = None, stderr_tail: str = "") -> list[Event]:
        if self.turn_done:
            return []
        self.turn_done = True
        message = f"codex exec exited with code {exit_code} before the turn completed"
        if stderr_tail.strip():
            message = f"{message}: {stderr_tail.strip()[-1000:]}"
        return [TurnCompleted(stop_reason=StopReason.ERROR, error=message)]

    # ── helpers ──
    def _end(self, reason: StopReason, error: str | None, raw: Any) -> TurnCompleted:
        return TurnCompleted(stop_reason=reason, error=error, result_text=self._last_text, raw=raw)

    @staticmethod
    def _usage(obj: dict[str, Any]) -> list[Event]:
        usage = obj.get("usage")
        if type(usage) is not dict:
            return []
        mark_part(usage, "usage")
        return [
            Usage(
                input_tokens=usage.get("input_tokens"),
                output_tokens=usage.get("output_tokens"),
                cache_read_tokens=usage.get("cached_input_tokens"),
                cache_write_tokens=usage.get("cache_write_input_tokens"),
                reasoning_tokens=usage.get("reasoning_output_tokens"),
                raw=usage,
            )
        ]

    def _item(self, phase: str, item: dict[str, Any], raw: dict[str, Any]) -> list[Event]:
        kind = item.get("type")
        item_id = str(item.get("id"))
        done = phase == "item.completed"
        if kind == "agent_message":
            if not done:
                return []
            text = str(item.get("text") or "")
            self._last_text = text
            return [
                TextDelta(text=text, message_id=item_id, raw=raw),
                TextComplete(text=text, message_id=item_id, raw=raw),
            ]
        if kind == "reasoning":
            text = str(item.get("text") or "")
            return [ReasoningComplete(text=text, message_id=item_id, raw=raw)] if done else []
        if kind == "todo_list":
            entries = tuple(
                PlanEntry(
                    content=str(t.get("text", "")),
                    status="completed" if t.get("completed") else "pending",
                )
                for t in sequence(item.get("items"))
                if isinstance(t, dict)
            )
            return [PlanUpdated(entries=entries, raw=raw)]
        if kind == "error":
            return [WarningEvent(message=str(item.get("message", "")), raw=raw)] if done else []
        describe = _TOOLS.get(str(kind))
        if describe is None:
            return [UnknownEvent(vendor_type=f"{phase}:{kind}", raw=raw)]
        events: list[Event] = []
        if item_id not in self._started:
            self._started.add(item_id)
            name, tool_kind, tool_input, file, cmd = describe(item)
            events.append(
                ToolCallStarted(
                    call_id=item_id,
                    name=name,
                    kind=tool_kind,
                    title=cmd or file or name,
                    input=tool_input,
                    file=file,
                    cmd=cmd,
                    raw=raw,
                )
            )
        if done:
            events += self._tool_end(item, raw)
        return events

    @staticmethod
    def _tool_end(item: dict[str, Any], raw: dict[str, Any]) -> list[Event]:
        item_id = str(item.get("id"))
        name, tool_kind = _TOOLS[str(item.get("type"))](item)[:2]
        events: list[Event] = []
        if item.get("type") == "file_change":
            events += [
                FileDiff(path=str(c.get("path", "")), call_id=item_id, raw=c)
                for c in sequence(item.get("changes"))
                if isinstance(c, dict)
            ]
        status = item.get("status")
        output = item.get("aggregated_output")
        if item.get("type") == "mcp_tool_call":
            result = item.get("result") or {}
            output = "\n".join(
                str(c.get("text", ""))
                for c in (result.get("content") or [] if isinstance(result, dict) else [])
                if isinstance(c, dict)
            )
        exit_code = item.get("exit_code")
        failed = status in ("failed", "declined") or bool(exit_code)
        result = ToolResult(output=str(output or ""), exit_code=exit_code, is_error=failed)
        if status in ("failed", "declined"):
            err = item.get("error")
            message = err.get("message") if isinstance(err, dict) else None
            events.append(
                ToolCallFailed(
                    call_id=item_id,
                    error=message or str(output or status),
                    denied=status == "declined",
                    result=result,
                    name=name,
                    kind=tool_kind,
                    raw=raw,
                )
            )
        else:
            events.append(
                ToolCallCompleted(
                    call_id=item_id, result=result, name=name, kind=tool_kind, raw=raw
                )
            )
        return events


_Described = tuple[str, ToolKind, Any, str | None, str | None]


def _command(item: dict[str, Any]) -> _Described:
    cmd = str(item.get("command") or "")
    return "shell", command_kind(cmd), {"command": cmd}, None, cmd


def _file_change(item: dict[str, Any]) -> _Described:
    changes = [c for c in sequence(item.get("changes")) if isinstance(c, dict)]
    first = changes[0].get("path") if changes else None
    return "apply_patch", ToolKind.EDIT, {"changes": changes}, first, None


def _mcp(item: dict[str, Any]) -> _Described:
    name = f"mcp__{item.get('server')}__{item.get('tool')}"
    return name, ToolKind.MCP, item.get("arguments"), None, None


def _web(item: dict[str, Any]) -> _Described:
    return "web_search", ToolKind.WEB, {"query": item.get("query")}, None, None


def _collab(item: dict[str, Any]) -> _Described:
    return (
        str(item.get("tool") or "agent"),
        ToolKind.SUBAGENT,
        {"prompt": item.get("prompt")},
        None,
        None,
    )


_TOOLS = {
    "command_execution": _command,
    "file_change": _file_change,
    "mcp_tool_call": _mcp,
    "web_search": _web,
    "collab_tool_call": _collab,
}
