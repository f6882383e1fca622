"""State the OpenCode SSE parser keeps: ignored event types, the followed sessions, the turn."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

IGNORED_TYPES = frozenset(
    {
        "server.connected",
        "server.heartbeat",
        "server.instance.disposed",
        "global.disposed",
        "plugin.added",
        "catalog.updated",
        "reference.updated",
        "integration.updated",
        "integration.connection.updated",
        "models-dev.refreshed",
        "installation.updated",
        "installation.update-available",
        "lsp.updated",
        "lsp.client.diagnostics",
        "file.edited",
        "file.watcher.updated",
        "project.updated",
        "project.directories.updated",
        "vcs.branch.updated",
        "mcp.tools.changed",
        "command.executed",
        "session.created",
        "session.updated",
        "session.deleted",
        "message.removed",
        "message.part.removed",
        "pty.created",
        "pty.updated",
        "pty.exited",
        "pty.deleted",
        "workspace.ready",
        "workspace.failed",
        "workspace.status",
        "worktree.ready",
        "worktree.failed",
    }
)
"""Event types that carry nothing a corral consumer needs (or only feed the parser's own state)."""

_IGNORED_PREFIXES = ("tui.", "session.next.", "permission.v2.", "question.v2.")
"""The v2 mirror events repeat what the v1 events say; TUI events are for the TUI."""

_SESSION_PATH = re.compile(r"^/session/(?P<id>ses[^/]+)(?P<rest>/.*)?$")
_ABORTED = "MessageAbortedError"


@dataclass
class _Turn:
    open: bool = False
    busy: bool = False
    interrupted: bool = False
    error: str | None = None
    last_text: str | None = None


@dataclass
class _Text:
    kind: str
    emitted: str = ""
    done: bool = False


@dataclass
class _Scope:
    """Sessions we follow: the root and its descendants (child id → parent id)."""

    root: str | None = None
    parents: dict[str, str] = field(default_factory=dict)
    call_of: dict[str, str] = field(default_factory=dict)
    running_tasks: dict[str, list[str]] = field(default_factory=dict)

    def follows(self, sid: Any) -> bool:
        return isinstance(sid, str) and (sid == self.root or sid in self.parents)

    def parent_call(self, sid: str) -> str | None:
        if sid == self.root or sid not in self.parents:
            return None
        if sid in self.call_of:
            return self.call_of[sid]
        running = self.running_tasks.get(self.parents[sid]) or []
        return running[-1] if running else f"session:{sid}"


def _error_message(error: dict[str, Any]) -> str:
    data = error.get("data") if isinstance(error.get("data"), dict) else {}
    assert isinstance(data, dict)
    message = data.get("message") or error.get("message") or error.get("name") or "unknown error"
    return str(message)


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) else None
