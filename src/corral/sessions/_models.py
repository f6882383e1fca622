"""The records the session layer stores and returns: sessions, prompts, drafts and view state."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

import msgspec

from ..adapters.base import Attachment
from ..intents import Intent


class SessionState(StrEnum):
    """Where a session's lifecycle is, as corral last recorded it."""

    CREATED = "created"
    """Stored, never started."""
    STARTING = "starting"
    """The adapter is starting."""
    IDLE = "idle"
    """Running, no turn in progress."""
    BUSY = "busy"
    """Running, a turn is in progress."""
    FAILED = "failed"
    """The agent process died or its protocol broke; resumable when the adapter supports it."""
    DISCONNECTED = "disconnected"
    """corral stopped while the session was live (found on restart); resumable likewise."""
    ENDED = "ended"
    """Finished or killed on purpose; kept with its transcript."""
    DETACHED = "detached"
    """Observer detached (seed 003): a terminal holds the conversation, corral only mirrors it;
    prompts wait in the queue until corral takes over (docs/handoff.md)."""


RESUMABLE_STATES = frozenset({SessionState.FAILED, SessionState.DISCONNECTED})
LIVE_STATES = frozenset({SessionState.STARTING, SessionState.IDLE, SessionState.BUSY})


class PromptState(StrEnum):
    """Delivery state of one queued prompt. See :mod:`corral.sessions._queue` for the rules."""

    QUEUED = "queued"
    """Waiting its turn; may be edited or canceled."""
    SENDING = "sending"
    """Committed as being handed to the adapter; not yet acknowledged."""
    DELIVERED = "delivered"
    """The adapter acknowledged it (its driver's ack point was reached)."""
    FAILED = "failed"
    """The adapter refused it before accepting; may be retried explicitly."""
    CANCELED = "canceled"
    """Withdrawn before delivery; stays visible in the transcript."""
    INDETERMINATE = "indeterminate"
    """corral stopped between handing it over and the ack: the agent may or may not have it.
    Never replayed automatically; retry is an explicit decision."""


PENDING_PROMPT_STATES = frozenset({PromptState.QUEUED, PromptState.SENDING})


class SessionSpec(msgspec.Struct, frozen=True, kw_only=True):
    """What a caller asks for when creating a session."""

    adapter_id: str
    model: str | None = None
    effort: str | None = None
    cwd: str | None = None
    intent: Intent | None = None
    """What the agent may do (docs/intents.md); ``None`` is the vendor's own default behaviour."""
    allowed_commands: tuple[str, ...] = ()
    """The project's allowed command prefixes (seed 002 ``AGENT_COMMANDS``), with ``intent``."""


class SessionRecord(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    adapter_id: str
    model: str | None
    effort: str | None
    cwd: str | None
    intent: Intent | None
    allowed_commands: tuple[str, ...]
    state: SessionState
    agent_session_id: str | None
    agent_info: dict[str, Any] | None
    last_error: str | None
    created_at: datetime
    updated_at: datetime
    last_seq: int = 0


class PromptRecord(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    session_id: str
    position: int
    state: PromptState
    text: str
    attachments: tuple[Attachment, ...]
    launch: dict[str, Any]
    """The launch policy the prompt was queued with (``model``, ``effort``, ``intent``); checked
    when queued and applied at delivery (see :mod:`corral.sessions._launch_policy`)."""
    version: int
    attempts: int
    error: str | None
    created_at: datetime
    updated_at: datetime
    sending_at: datetime | None
    delivered_at: datetime | None


class ViewState(msgspec.Struct, frozen=True, kw_only=True):
    """A session's composer draft and view state (seed 001: they survive restarts)."""

    draft_text: str = ""
    draft_attachments: tuple[Attachment, ...] = ()
    edit_target: str | None = None
    """The queued prompt being edited, kept apart from the new-message draft."""
    scroll_position: float | None = None
    follow: bool = True
    updated_at: datetime | None = None


class SessionStatus(msgspec.Struct, frozen=True, kw_only=True):
    """A fresh look at a session: the stored record plus what the live runtime knows."""

    session: SessionRecord
    running: bool
    busy: bool
    queue: dict[str, int]
    pending_approvals: tuple[str, ...]
    pending_questions: tuple[str, ...]
    adapter_status: dict[str, Any] | None = None
