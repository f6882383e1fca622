"""Persistent agent sessions with a durable SQLite prompt queue (seed 001).

:class:`SessionManager` creates, starts, streams, stops, kills, resumes and repairs sessions driven by
any :class:`~corral.adapters.base.BaseAdapter`; :mod:`corral.sessions._queue` documents the queue's
delivery semantics (at-most-once, *indeterminate* after a crash, never replayed automatically).

The public names load on first use (PEP 562), as :mod:`corral`'s do: the database writer's child
process (:mod:`corral.sessions._writer_process`) imports this package for its own module and the
store's and queue's operations, and never needs the manager, the hub or the adapters' resolver.
"""

from __future__ import annotations

from .._exports import lazy_exports

TYPE_CHECKING = False

if TYPE_CHECKING:
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

# Public name → the module that defines it.
_LAZY = {
    "DEFAULT_QUEUE_LIMIT": "._queue",
    "WRITERS": "._manager",
    "AdapterResolver": "._resolve",
    "PromptQueue": "._queue",
    "PromptRecord": "._models",
    "PromptState": "._models",
    "Resolver": "._resolve",
    "SeqGate": "._hub",
    "SessionManager": "._manager",
    "SessionRecord": "._models",
    "SessionSpec": "._models",
    "SessionState": "._models",
    "SessionStatus": "._models",
    "SessionStore": "._store",
    "ViewState": "._models",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals(), __all__)
