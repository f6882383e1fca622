"""Projection of the event model onto the task board's normalized schema v1 (seed 002).

``{"v": 1, "session", "kind", "summary", "file"?, "cmd"?, "detail"?, "ok"?, "running"?, "agent"?,
"task"?}`` — one board event per *action*; text and deltas are not board material. A tool call
shows as a ``running`` line when it starts and a completed line when it ends.
"""

from __future__ import annotations

import functools
import re
from typing import Literal

import msgspec

from ._envelope import Envelope
from ._model import (
    ErrorEvent,
    Event,
    PlanUpdated,
    SessionEnded,
    SessionStarted,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallStarted,
    ToolKind,
    TurnCompleted,
)

BoardKind = Literal[
    "session",
    "end",
    "idle",
    "edit",
    "read",
    "search",
    "command",
    "test",
    "check",
    "git",
    "plan",
    "subagent",
    "web",
    "other",
]


class BoardEvent(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    v: Literal[1]
    session: str
    kind: BoardKind
    summary: str
    file: str | None = None
    cmd: str | None = None
    detail: str | None = None
    ok: bool | None = None
    running: bool | None = None
    agent: str | None = None
    task: str | None = None


_TEST_CMD = re.compile(
    r"^\s*(pytest|python3? -m (pytest|unittest)|npm (run )?test|yarn test|pnpm test|go test|"
    r"cargo test|make test|tox|nox|jest|vitest|mvn test|gradle test)\b"
)
_CHECK_CMD = re.compile(r"^\s*(ruff|mypy|pyright|eslint|tsc|flake8|black --check|cargo clippy)\b")
_GIT_CMD = re.compile(r"^\s*(git|gh)\s")

_KIND_MAP: dict[ToolKind, BoardKind] = {
    ToolKind.EDIT: "edit",
    ToolKind.READ: "read",
    ToolKind.SEARCH: "search",
    ToolKind.COMMAND: "command",
    ToolKind.TEST: "test",
    ToolKind.WEB: "web",
    ToolKind.SUBAGENT: "subagent",
    ToolKind.MCP: "other",
    ToolKind.OTHER: "other",
}


def board_kind(kind: ToolKind, cmd: str | None = None) -> BoardKind:
    """The board kind of a tool call; shell commands are refined into git / test / check."""
    if kind in (ToolKind.COMMAND, ToolKind.TEST) and cmd:
        if _GIT_CMD.match(cmd):
            return "git"
        if _TEST_CMD.match(cmd):
            return "test"
        if _CHECK_CMD.match(cmd):
            return "check"
    return _KIND_MAP[kind]


def _summary(name: str, title: str | None, file: str | None, cmd: str | None) -> str:
    if title:
        return title
    if cmd:
        return f"{name}: {cmd}"
    if file:
        return f"{name} {file}"
    return name


_PROJECTED = (
    SessionStarted,
    SessionEnded,
    TurnCompleted,
    ToolCallStarted,
    ToolCallCompleted,
    ToolCallFailed,
    PlanUpdated,
    ErrorEvent,
)
"""The event types :meth:`BoardProjector.project_event` matches."""


@functools.cache
def _projects(cls: type) -> bool:
    """Whether events of ``cls`` are among :data:`_PROJECTED` (by subclass, as ``match`` decides),
    found once per type: most events are text deltas, and every one passes here."""
    return issubclass(cls, _PROJECTED)


class BoardProjector:
    """Turns one session's envelopes into board events; remembers calls so ends match starts."""

    def __init__(self, *, agent: str | None = None, task: str | None = None) -> None:
        self.agent = agent
        self.task = task
        self._calls: dict[str, ToolCallStarted] = {}

    def _make(
        self,
        session: str,
        kind: BoardKind,
        summary: str,
        *,
        file: str | None = None,
        cmd: str | None = None,
        detail: str | None = None,
        ok: bool | None = None,
        running: bool | None = None,
    ) -> BoardEvent:
        return BoardEvent(
            v=1,
            session=session,
            kind=kind,
            summary=summary,
            file=file,
            cmd=cmd,
            detail=detail,
            ok=ok,
            running=running,
            agent=self.agent,
            task=self.task,
        )

    def project(self, envelope: Envelope) -> BoardEvent | None:
        return self.project_event(envelope.session_id, envelope.event)

    def project_event(self, session: str, event: Event) -> BoardEvent | None:
        if not _projects(type(event)):  # most events (text, status) are not board material
            return None
        match event:
            case SessionStarted(agent=agent):
                return self._make(session, "session", f"{agent.name} session started")
            case SessionEnded(reason=reason, message=message):
                return self._make(
                    session,
                    "end",
                    f"session {reason.value}",
                    detail=message,
                    ok=reason.value in ("completed", "killed"),
                )
            case TurnCompleted(stop_reason=stop, error=error):
                return self._make(
                    session, "idle", f"turn ended: {stop.value}", detail=error, ok=error is None
                )
            case ToolCallStarted():
                self._calls[event.call_id] = event
                return self._make(
                    session,
                    board_kind(event.kind, event.cmd),
                    _summary(event.name, event.title, event.file, event.cmd),
                    file=event.file,
                    cmd=event.cmd,
                    running=True,
                )
            case ToolCallCompleted() | ToolCallFailed():
                return self._end_call(session, event)
            case PlanUpdated(entries=entries):
                done = sum(1 for e in entries if e.status == "completed")
                return self._make(session, "plan", f"plan: {done}/{len(entries)} done")
            case ErrorEvent(message=message, fatal=fatal):
                return (
                    self._make(session, "other", "error", detail=message, ok=False)
                    if fatal
                    else None
                )
        return None

    def _end_call(self, session: str, event: ToolCallCompleted | ToolCallFailed) -> BoardEvent:
        start = self._calls.pop(event.call_id, None)
        name = (start.name if start else None) or event.name or "tool"
        kind = (start.kind if start else None) or event.kind or ToolKind.OTHER
        file = start.file if start else None
        cmd = start.cmd if start else None
        title = start.title if start else None
        if isinstance(event, ToolCallFailed):
            detail: str | None = ("denied: " if event.denied else "") + event.error
            ok = False
        else:
            detail = event.result.output[:500] or None
            ok = not event.result.is_error and event.result.exit_code in (None, 0)
        return self._make(
            session,
            board_kind(kind, cmd),
            _summary(name, title, file, cmd),
            file=file,
            cmd=cmd,
            detail=detail,
            ok=ok,
        )
