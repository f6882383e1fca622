"""Projection of the event model onto seed 003's normalized blocks.

Blocks are what a chat surface renders: text that grows until ``done``, thinking, a tool call in
``running`` then ``done``/``error`` state with its paired result, plans, diffs, permission and
question cards, usage, and a ``SessionEndBlock`` that closes every turn.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from ._model import (
    AgentInfo,
    ApprovalOption,
    ApprovalRequested,
    ApprovalResolved,
    ErrorEvent,
    Event,
    FileDiff,
    PlanEntry,
    PlanUpdated,
    Question,
    QuestionAnswered,
    QuestionAsked,
    ReasoningComplete,
    ReasoningDelta,
    SessionEnded,
    SessionStarted,
    StatusChanged,
    TextComplete,
    TextDelta,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallStarted,
    ToolCallUpdated,
    ToolKind,
    TurnCompleted,
    Usage,
    WarningEvent,
)


class _Block(msgspec.Struct, frozen=True, kw_only=True, tag_field="block", omit_defaults=True):
    pass


class AgentInfoBlock(_Block, frozen=True, tag="agent_info"):
    info: AgentInfo


class TextBlock(_Block, frozen=True, tag="text"):
    text: str
    done: bool
    id: str | None = None
    parent_id: str | None = None


class ThinkingBlock(_Block, frozen=True, tag="thinking"):
    text: str
    done: bool
    id: str | None = None
    parent_id: str | None = None


class ToolCallBlock(_Block, frozen=True, tag="tool_call"):
    id: str
    name: str
    status: Literal["running", "done", "error"]
    kind: ToolKind = ToolKind.OTHER
    input: Any = None
    parent_id: str | None = None


class ToolResultBlock(_Block, frozen=True, tag="tool_result"):
    tool_call_id: str
    output: str
    is_error: bool = False


class DiffBlock(_Block, frozen=True, tag="diff"):
    path: str
    diff: str | None = None


class PlanBlock(_Block, frozen=True, tag="plan"):
    entries: tuple[PlanEntry, ...]


class PermissionBlock(_Block, frozen=True, tag="permission"):
    request_id: str
    tool_name: str
    title: str | None = None
    input: Any = None
    options: tuple[ApprovalOption, ...] = ()
    resolved: str | None = None


class QuestionBlock(_Block, frozen=True, tag="question"):
    request_id: str
    questions: tuple[Question, ...] = ()
    answers: dict[str, str] | None = None


class UsageBlock(_Block, frozen=True, tag="usage"):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None


class StatusBlock(_Block, frozen=True, tag="status"):
    text: str
    level: Literal["info", "warning", "error"] = "info"


class SessionEndBlock(_Block, frozen=True, tag="session_end"):
    """Closes a turn (``reason`` completed / cancelled / failed) — seed 003's turn terminator."""

    reason: str
    error: str | None = None


Block = (
    AgentInfoBlock
    | TextBlock
    | ThinkingBlock
    | ToolCallBlock
    | ToolResultBlock
    | DiffBlock
    | PlanBlock
    | PermissionBlock
    | QuestionBlock
    | UsageBlock
    | StatusBlock
    | SessionEndBlock
)


class BlockProjector:
    """Turns one session's events into blocks; remembers tool names so results pair up."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolCallStarted] = {}

    def project(self, event: Event) -> list[Block]:
        match event:
            case SessionStarted(agent=agent):
                return [AgentInfoBlock(info=agent)]
            case TextDelta(text=t, message_id=mid, parent_call_id=p):
                return [TextBlock(text=t, done=False, id=mid, parent_id=p)]
            case TextComplete(text=t, message_id=mid, parent_call_id=p):
                return [TextBlock(text=t, done=True, id=mid, parent_id=p)]
            case ReasoningDelta(text=t, message_id=mid, parent_call_id=p):
                return [ThinkingBlock(text=t, done=False, id=mid, parent_id=p)]
            case ReasoningComplete(text=t, message_id=mid, parent_call_id=p):
                return [ThinkingBlock(text=t, done=True, id=mid, parent_id=p)]
            case ToolCallStarted():
                self._tools[event.call_id] = event
                return [self._call(event.call_id, "running", event.input)]
            case ToolCallUpdated(call_id=cid, input=inp) if inp is not None and cid in self._tools:
                return [self._call(cid, "running", inp)]
            case ToolCallCompleted(call_id=cid, result=result):
                status: Literal["done", "error"] = "error" if result.is_error else "done"
                return [
                    self._call(cid, status, None, event.name, event.kind),
                    ToolResultBlock(
                        tool_call_id=cid, output=result.output, is_error=result.is_error
                    ),
                ]
            case ToolCallFailed(call_id=cid, error=err):
                return [
                    self._call(cid, "error", None, event.name, event.kind),
                    ToolResultBlock(tool_call_id=cid, output=err, is_error=True),
                ]
            case FileDiff(path=path, diff=diff):
                return [DiffBlock(path=path, diff=diff)]
            case PlanUpdated(entries=entries):
                return [PlanBlock(entries=entries)]
            case ApprovalRequested():
                return [
                    PermissionBlock(
                        request_id=event.request_id,
                        tool_name=event.tool_name,
                        title=event.title,
                        input=event.input,
                        options=event.options,
                    )
                ]
            case ApprovalResolved(request_id=rid, decision=decision):
                return [PermissionBlock(request_id=rid, tool_name="", resolved=decision.value)]
            case QuestionAsked(request_id=rid, questions=qs):
                return [QuestionBlock(request_id=rid, questions=qs)]
            case QuestionAnswered(request_id=rid, answers=answers):
                return [QuestionBlock(request_id=rid, answers=answers)]
            case Usage(input_tokens=i, output_tokens=o, cost_usd=c):
                return [UsageBlock(input_tokens=i, output_tokens=o, cost_usd=c)]
            case StatusChanged(status=s, message=m):
                return [StatusBlock(text=f"{s}: {m}" if m else s)]
            case WarningEvent(message=m):
                return [StatusBlock(text=m, level="warning")]
            case ErrorEvent(message=m):
                return [StatusBlock(text=m, level="error")]
            case TurnCompleted(stop_reason=stop, error=err):
                reason = {"cancelled": "cancelled", "error": "failed"}.get(stop.value, "completed")
                return [SessionEndBlock(reason=reason, error=err)]
            case SessionEnded(reason=reason, message=m):
                return [SessionEndBlock(reason=reason.value, error=m)]
        return []

    def _call(
        self,
        call_id: str,
        status: Literal["running", "done", "error"],
        input: Any,
        name: str | None = None,
        kind: ToolKind | None = None,
    ) -> ToolCallBlock:
        start = self._tools.get(call_id)
        return ToolCallBlock(
            id=call_id,
            name=(start.name if start else None) or name or "tool",
            status=status,
            kind=(start.kind if start else None) or kind or ToolKind.OTHER,
            input=input if input is not None else (start.input if start else None),
            parent_id=start.parent_call_id if start else None,
        )
