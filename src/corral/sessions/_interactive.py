"""Optional adapter surfaces the session layer uses when an adapter has them.

``BaseAdapter`` defines the four required coroutines. Answering approvals and questions, interrupting a
turn, acknowledging a prompt at the protocol's own ack point and answering a status query are
optional: an adapter opts in simply by defining the method, and the session manager checks with
``isinstance(adapter, SupportsX)`` (these are runtime-checkable protocols, so no base class is
needed). An adapter without a surface gets a clear :class:`~corral.errors.SessionError`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from ..adapters.base import Attachment
from ..events import ApprovalDecision

AckHook = Callable[[], None]
"""Called by a driver once the agent has accepted a prompt; marks it ``delivered``. Idempotent."""


@runtime_checkable
class SupportsApprovals(Protocol):
    async def respond_approval(
        self,
        request_id: str,
        decision: ApprovalDecision,
        *,
        option_id: str | None = None,
        message: str | None = None,
    ) -> None:
        """Answer a pending ``ApprovalRequested``; the adapter emits ``ApprovalResolved``."""


@runtime_checkable
class SupportsQuestions(Protocol):
    async def answer_question(self, request_id: str, answers: dict[str, str]) -> None:
        """Answer a pending ``QuestionAsked`` (question text → answer)."""


@runtime_checkable
class SupportsInterrupt(Protocol):
    async def interrupt(self) -> None:
        """Cancel the current turn, keep the session; the turn ends with ``TurnCompleted(cancelled)``."""


@runtime_checkable
class AcknowledgingAdapter(Protocol):
    async def send_acknowledged(
        self, text: str, attachments: Sequence[Attachment] | None, *, ack: AckHook
    ) -> None:
        """Like ``send()``, but call ``ack()`` at the protocol's ack point (docs/sessions.md).

        Returning without calling ``ack`` acknowledges on return, as ``send()`` does; raising
        before ``ack`` marks the prompt ``failed``.
        """


@runtime_checkable
class SupportsStatusQuery(Protocol):
    async def query_status(self) -> dict[str, Any]:
        """Ask the agent for a fresh status (process alive, busy, model…)."""
