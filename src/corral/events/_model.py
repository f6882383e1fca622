"""The one normalized event model.

Every driver turns its vendor's wire traffic into these immutable values. Each event has a ``type``
tag (its discriminator on the wire) and keeps the vendor payload it came from in ``raw``. Identity —
session id, sequence number, time, source — is not here: the session layer wraps each event in an
:class:`~corral.events.Envelope`.

A vendor payload a parser does not understand becomes :class:`UnknownEvent`, never an exception.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import msgspec


class ToolKind(StrEnum):
    """What a tool call does, as far as a person watching cares."""

    EDIT = "edit"
    """Creates, edits or deletes files."""
    READ = "read"
    """Reads files or lists directories."""
    SEARCH = "search"
    """Greps or globs the workspace."""
    COMMAND = "command"
    """Runs a shell command."""
    TEST = "test"
    """Runs the project's tests (a command recognised as a test run)."""
    WEB = "web"
    """Fetches or searches the web."""
    SUBAGENT = "subagent"
    """Delegates to a sub-agent; its own tool calls nest under this call."""
    MCP = "mcp"
    """Calls a tool of an MCP server."""
    OTHER = "other"
    """Anything else (plans, todo lists, questions…)."""


class StopReason(StrEnum):
    """Why a turn ended."""

    END_TURN = "end_turn"
    """The agent finished its answer."""
    CANCELLED = "cancelled"
    """The turn was interrupted on request."""
    MAX_TOKENS = "max_tokens"
    """The model hit its output limit."""
    MAX_TURNS = "max_turns"
    """The agent hit its step or budget limit."""
    REFUSAL = "refusal"
    """The model refused."""
    ERROR = "error"
    """The turn failed; ``TurnCompleted.error`` says why."""


class EndReason(StrEnum):
    """Why a session ended. ``killed`` (our teardown) is kept apart from ``failed`` (a crash)."""

    COMPLETED = "completed"
    """The agent process exited normally."""
    CANCELLED = "cancelled"
    """The session was stopped on request before it finished."""
    FAILED = "failed"
    """The agent process died or the protocol broke."""
    KILLED = "killed"
    """corral tore the session down on purpose."""


class ApprovalDecision(StrEnum):
    """How an approval request was answered."""

    ALLOW = "allow"
    """Run it this time."""
    ALLOW_ALWAYS = "allow_always"
    """Run it, and do not ask again for the same thing in this session."""
    DENY = "deny"
    """Do not run it; the agent is told so."""
    CANCEL = "cancel"
    """Withdraw the request, usually because the turn is being cancelled."""


class _Base(
    msgspec.Struct, frozen=True, kw_only=True, tag_field="type", omit_defaults=True, gc=False
):
    raw: Any = None
    """The vendor payload this event was made from (a parsed JSON object), kept verbatim."""


class Capabilities(msgspec.Struct, frozen=True, kw_only=True):
    """What an adapter can do. Surfaces read these flags, never adapter ids.

    ``image_input`` (images in a prompt) and ``cancel`` (interrupting a running turn) were once
    also spelled ``images`` and ``interrupt``; no adapter ever set one without the other.
    """

    documents: bool = False
    thinking: bool = False
    permissions: bool = False
    subagents: bool = False
    input_during_turn: bool = False
    terminal: bool = False
    resume: bool = False
    cancel: bool = False
    interact: bool = False
    attached_terminal: bool = False
    image_input: bool = False

    def enabled(self) -> list[str]:
        return [f for f in self.__struct_fields__ if getattr(self, f)]


class AgentInfo(msgspec.Struct, frozen=True, kw_only=True):
    """Who is on the other end of a session."""

    agent_id: str
    name: str
    version: str | None = None
    model: str | None = None
    capabilities: Capabilities = msgspec.field(default_factory=Capabilities)
    slash_commands: tuple[str, ...] = ()
    agent_session_id: str | None = None
    """The agent's own session/thread id, used to resume."""


# ── session and turn ────────────────────────────────────────────────────────────────────────────


class SessionStarted(_Base, frozen=True, tag="session.started"):
    agent: AgentInfo
    cwd: str | None = None


class StatusChanged(_Base, frozen=True, tag="status"):
    """A state change worth showing: busy/idle, compacting, retrying, permission mode, model…"""

    status: str
    message: str | None = None


class TurnCompleted(_Base, frozen=True, tag="turn.completed"):
    """Ends every turn. ``error`` is set when ``stop_reason`` is ``error``."""

    stop_reason: StopReason = StopReason.END_TURN
    turn_id: str | None = None
    error: str | None = None
    result_text: str | None = None


class SessionEnded(_Base, frozen=True, tag="session.ended"):
    reason: EndReason
    exit_code: int | None = None
    message: str | None = None
    stderr_tail: str | None = None


# ── text and reasoning ──────────────────────────────────────────────────────────────────────────


class TextDelta(_Base, frozen=True, tag="text.delta"):
    text: str
    message_id: str | None = None
    parent_call_id: str | None = None
    """Set when a sub-agent produced it: the id of the tool call that started the sub-agent."""


class TextComplete(_Base, frozen=True, tag="text.complete"):
    text: str
    message_id: str | None = None
    parent_call_id: str | None = None


class ReasoningDelta(_Base, frozen=True, tag="reasoning.delta"):
    text: str
    message_id: str | None = None
    parent_call_id: str | None = None


class ReasoningComplete(_Base, frozen=True, tag="reasoning.complete"):
    text: str
    message_id: str | None = None
    parent_call_id: str | None = None


# ── tools ───────────────────────────────────────────────────────────────────────────────────────


class ToolResult(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A tool call's output, paired to its call by ``call_id`` on the event."""

    output: str = ""
    structured: Any = None
    exit_code: int | None = None
    is_error: bool = False


class ToolCallStarted(_Base, frozen=True, tag="tool.started"):
    call_id: str
    name: str
    kind: ToolKind = ToolKind.OTHER
    title: str | None = None
    input: Any = None
    file: str | None = None
    cmd: str | None = None
    parent_call_id: str | None = None


class ToolCallUpdated(_Base, frozen=True, tag="tool.updated"):
    """More about a running call: its full input once streamed, or a chunk of its output."""

    call_id: str
    input: Any = None
    output_delta: str | None = None
    status: str | None = None
    title: str | None = None
    file: str | None = None
    cmd: str | None = None
    parent_call_id: str | None = None


class ToolCallCompleted(_Base, frozen=True, tag="tool.completed"):
    call_id: str
    result: ToolResult = msgspec.field(default_factory=ToolResult)
    name: str | None = None
    kind: ToolKind | None = None
    parent_call_id: str | None = None


class ToolCallFailed(_Base, frozen=True, tag="tool.failed"):
    call_id: str
    error: str
    denied: bool = False
    """True when the call did not run because permission was refused."""
    result: ToolResult | None = None
    name: str | None = None
    kind: ToolKind | None = None
    parent_call_id: str | None = None


class FileDiff(_Base, frozen=True, tag="file.diff"):
    path: str
    diff: str | None = None
    """A unified diff, when the agent gave one or it could be computed."""
    old_text: str | None = None
    new_text: str | None = None
    call_id: str | None = None


# ── interaction ─────────────────────────────────────────────────────────────────────────────────


class ApprovalOption(msgspec.Struct, frozen=True, kw_only=True):
    """One answer the agent offers. ``decision`` is corral's meaning of the vendor's own ``id``."""

    id: str
    label: str
    decision: ApprovalDecision


class ApprovalRequested(_Base, frozen=True, tag="approval.requested"):
    request_id: str
    tool_name: str
    kind: ToolKind = ToolKind.OTHER
    title: str | None = None
    input: Any = None
    call_id: str | None = None
    file: str | None = None
    cmd: str | None = None
    options: tuple[ApprovalOption, ...] = ()


class ApprovalResolved(_Base, frozen=True, tag="approval.resolved"):
    request_id: str
    decision: ApprovalDecision
    option_id: str | None = None
    message: str | None = None


class Question(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    question: str
    header: str | None = None
    options: tuple[str, ...] = ()
    multi_select: bool = False


class QuestionAsked(_Base, frozen=True, tag="question.asked"):
    request_id: str
    questions: tuple[Question, ...]
    call_id: str | None = None


class QuestionAnswered(_Base, frozen=True, tag="question.answered"):
    request_id: str
    answers: dict[str, str]


class PlanEntry(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    content: str
    status: str = "pending"
    """``pending``, ``in_progress`` or ``completed``."""
    priority: str | None = None


class PlanUpdated(_Base, frozen=True, tag="plan.updated"):
    entries: tuple[PlanEntry, ...]
    explanation: str | None = None


# ── accounting and problems ─────────────────────────────────────────────────────────────────────


class Usage(_Base, frozen=True, tag="usage"):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost_usd: float | None = None
    model: str | None = None


class WarningEvent(_Base, frozen=True, tag="warning"):
    message: str
    code: str | None = None


class ErrorEvent(_Base, frozen=True, tag="error"):
    message: str
    code: str | None = None
    fatal: bool = False


class UnknownEvent(_Base, frozen=True, tag="unknown"):
    """A vendor payload no parser understood, kept whole in ``raw``."""

    vendor_type: str | None = None


Event = (
    SessionStarted
    | StatusChanged
    | TurnCompleted
    | SessionEnded
    | TextDelta
    | TextComplete
    | ReasoningDelta
    | ReasoningComplete
    | ToolCallStarted
    | ToolCallUpdated
    | ToolCallCompleted
    | ToolCallFailed
    | FileDiff
    | ApprovalRequested
    | ApprovalResolved
    | QuestionAsked
    | QuestionAnswered
    | PlanUpdated
    | Usage
    | WarningEvent
    | ErrorEvent
    | UnknownEvent
)
"""Every event corral emits. ``UnknownEvent`` closes the union."""

EVENT_TYPES: tuple[type[_Base], ...] = Event.__args__
EVENT_TAGS: dict[str, type[_Base]] = {str(t.__struct_config__.tag): t for t in EVENT_TYPES}
