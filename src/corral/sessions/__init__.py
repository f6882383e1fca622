"""Persistent agent sessions with a durable SQLite prompt queue (seed 001).

:class:`SessionManager` creates, starts, streams, stops, kills, resumes and repairs sessions driven by
any :class:`~corral.adapters.base.BaseAdapter`; :mod:`corral.sessions._queue` documents the queue's
delivery semantics (at-most-once, *indeterminate* after a crash, never replayed automatically).
"""

from ._hub import SeqGate
from ._manager import WRITERS, SessionManager
from ._models import (
    PromptRecord,
    PromptState,
    SessionRecord,
    SessionSpec,
    SessionState,
    SessionStatus,
    ViewState,
)
from ._queue import DEFAULT_QUEUE_LIMIT, PromptQueue
from ._resolve import AdapterResolver, Resolver
from ._store import SessionStore

__all__ = [
    "DEFAULT_QUEUE_LIMIT",
    "WRITERS",
    "AdapterResolver",
    "PromptQueue",
    "PromptRecord",
    "PromptState",
    "Resolver",
    "SeqGate",
    "SessionManager",
    "SessionRecord",
    "SessionSpec",
    "SessionState",
    "SessionStatus",
    "SessionStore",
    "ViewState",
]
