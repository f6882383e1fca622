"""OpenCode tool parts: one snapshot per state change (pending → running → completed | error).

Each ``message.part.updated`` of type ``tool`` repeats the whole part; the tracker remembers what
it already reported per part and emits only what is new. ``task`` calls register the child session
they start (``state.metadata.sessionId``) so the child's events nest under the call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..events import (
    Event,
    FileDiff,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallStarted,
    ToolCallUpdated,
    ToolKind,
    ToolResult,
)
from ._opencode_tools import command_of, file_of, tool_kind

if TYPE_CHECKING:
    from ._opencode_state import _Scope

_DENIED_MARKERS = ("rejected permission", "permission denied", "denied by")


@dataclass
class _Call:
    call_id: str
    name: str
    kind: ToolKind
    input: Any = None
    output: str = ""
    title: str | None = None
    finished: bool = False


@dataclass
class ToolTracker:
    scope: _Scope
    denied: set[str] = field(default_factory=set)
    calls: dict[str, _Call] = field(default_factory=dict)

    def update(self, part: dict[str, Any], parent: str | None, obj: dict[str, Any]) -> list[Event]:
        state = part.get("state") if isinstance(part.get("state"), dict) else {}
        assert isinstance(state, dict)
        status = state.get("status")
        key = str(part.get("id") or part.get("callID"))
        name = str(part.get("tool") or "unknown")
        call_id = str(part.get("callID") or key)
        tool_input = state.get("input") if state.get("input") else None
        metadata = state.get("metadata") if isinstance(state.get("metadata"), dict) else {}
        assert isinstance(metadata, dict)
        title = state.get("title") if isinstance(state.get("title"), str) else None
        out: list[Event] = []
        call = self.calls.get(key)
        if call is None:
            call = _Call(call_id=call_id, name=name, kind=tool_kind(name, tool_input))
            call.input, call.title = tool_input, title
            self.calls[key] = call
            out.append(
                ToolCallStarted(
                    call_id=call_id,
                    name=name,
                    kind=call.kind,
                    title=title,
                    input=tool_input,
                    file=file_of(tool_input, metadata),
                    cmd=command_of(tool_input),
                    parent_call_id=parent,
                    raw=obj,
                )
            )
        elif call.finished:
            return []
        if name == "task":
            self._note_task(part, call_id, status, metadata)
        if status in ("pending", "running"):
            out += self._running(call, tool_input, metadata, title, parent, obj, status)
        elif status == "completed":
            call.finished = True
            out += self._completed(call, state, tool_input, metadata, parent, obj)
        elif status == "error":
            call.finished = True
            error = str(state.get("error") or "tool failed")
            denied = call.call_id in self.denied or any(m in error.lower() for m in _DENIED_MARKERS)
            out.append(
                ToolCallFailed(
                    call_id=call.call_id,
                    error=error,
                    denied=denied,
                    name=call.name,
                    kind=call.kind,
                    parent_call_id=parent,
                    raw=obj,
                )
            )
        return out

    def _note_task(
        self, part: dict[str, Any], call_id: str, status: Any, meta: dict[str, Any]
    ) -> None:
        sid = str(part.get("sessionID"))
        running = self.scope.running_tasks.setdefault(sid, [])
        child = meta.get("sessionId") or meta.get("sessionID")
        if isinstance(child, str):
            self.scope.call_of[child] = call_id
            self.scope.parents.setdefault(child, sid)
        if status == "running" and call_id not in running:
            running.append(call_id)
        elif status in ("completed", "error") and call_id in running:
            running.remove(call_id)

    def _running(
        self,
        call: _Call,
        tool_input: Any,
        metadata: dict[str, Any],
        title: str | None,
        parent: str | None,
        obj: dict[str, Any],
        status: Any,
    ) -> list[Event]:
        changed_input = tool_input is not None and tool_input != call.input
        streamed = metadata.get("output") if isinstance(metadata.get("output"), str) else None
        delta = None
        if streamed is not None and streamed.startswith(call.output) and streamed != call.output:
            delta = streamed[len(call.output) :]
            call.output = streamed
        if not changed_input and delta is None and title == call.title:
            return []
        if changed_input:
            call.input = tool_input
            call.kind = tool_kind(call.name, tool_input)
        call.title = title or call.title
        return [
            ToolCallUpdated(
                call_id=call.call_id,
                input=tool_input if changed_input else None,
                output_delta=delta,
                status=str(status),
                title=title,
                file=file_of(tool_input, metadata) if changed_input else None,
                cmd=command_of(tool_input) if changed_input else None,
                parent_call_id=parent,
                raw=obj,
            )
        ]

    def _completed(
        self,
        call: _Call,
        state: dict[str, Any],
        tool_input: Any,
        metadata: dict[str, Any],
        parent: str | None,
        obj: dict[str, Any],
    ) -> list[Event]:
        exit_code = metadata.get("exit")
        out: list[Event] = [
            ToolCallCompleted(
                call_id=call.call_id,
                result=ToolResult(
                    output=str(state.get("output") or ""),
                    structured=metadata or None,
                    exit_code=exit_code if isinstance(exit_code, int) else None,
                ),
                name=call.name,
                kind=call.kind,
                parent_call_id=parent,
                raw=obj,
            )
        ]
        if call.kind is ToolKind.EDIT:
            path = file_of(tool_input, metadata)
            if path:
                diff = metadata.get("diff") if isinstance(metadata.get("diff"), str) else None
                new_text = None
                if call.name == "write" and isinstance(tool_input, dict):
                    content = tool_input.get("content")
                    new_text = content if isinstance(content, str) else None
                out.append(
                    FileDiff(path=path, diff=diff, new_text=new_text, call_id=call.call_id, raw=obj)
                )
        return out
