"""Request bodies of the sessions API (msgspec structs: decoding validates them)."""

from __future__ import annotations

from typing import Any

import msgspec

from ..adapters.base import Attachment
from ..events import ApprovalDecision
from ..intents import Intent


class CreateSession(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    adapter_id: str
    model: str | msgspec.UnsetType | None = msgspec.UNSET
    """Absent: the adapter's profile (``PUT /api/settings/adapters/{id}/defaults``); ``null``:
    the adapter's own default, whatever the profile says."""
    effort: str | msgspec.UnsetType | None = msgspec.UNSET
    """As ``model``: absent takes the profile's effort, ``null`` the adapter's own."""
    cwd: str | None = None
    intent: Intent | msgspec.UnsetType | None = msgspec.UNSET
    """ask | review | work | act-pr | full (docs/intents.md); refused with 422 ``intent_refused``
    where the adapter cannot enforce it. Absent: the profile's intent; ``null``: no intent, the
    vendor's own default behaviour (approve each action)."""
    allowed_commands: tuple[str, ...] = ()
    """The project's allowed command prefixes (with ``intent`` work or act-pr)."""
    start: bool = True


class SendPrompt(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    text: str
    attachments: tuple[Attachment, ...] = ()
    launch: dict[str, Any] = msgspec.field(default_factory=dict)


class EditPrompt(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    text: str
    expected_version: int | None = None


class ApprovalAnswer(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    decision: ApprovalDecision
    option_id: str | None = None
    message: str | None = None


class QuestionAnswer(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    answers: dict[str, str]


class ViewUpdate(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    draft_text: str = ""
    draft_attachments: tuple[Attachment, ...] = ()
    edit_target: str | None = None
    scroll_position: float | None = None
    follow: bool = True


class ErrorBody(msgspec.Struct, frozen=True, kw_only=True):
    error: str
    type: str
    detail: dict[str, Any] = msgspec.field(default_factory=dict)


class ResumeBody(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    fresh: bool = False
    """Instead of resuming, start a fresh session carrying a summary (the offer a refused resume
    makes: docs/handoff.md#resume-safety). The old session stays as it was."""


class LinkExternal(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    adapter_id: str
    sid: str
    """The vendor's own session id (as ``GET /api/handoff/external`` lists it)."""
    cwd: str | None = None
