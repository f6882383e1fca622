"""Hermes Agent's session store: one SQLite database (``state.db``) for every session.

Where: ``$HERMES_HOME`` (else ``~/.hermes``) ``/state.db`` (0.19.0). Tables: ``sessions`` (``id``
like ``20261201_171221_cc2005``, ``source`` = ``cli``/``acp``/gateway names, ``cwd``, ``title``,
``started_at``/``ended_at`` in seconds, ``parent_session_id`` for delegated and compressed
continuations, ``archived``) and ``messages`` (append-only rows: ``role`` ``user``/``assistant``
/``tool``, ``content``, ``tool_calls`` JSON in the Chat Completions shape, ``tool_call_id``,
``tool_name``, ``finish_reason``, ``reasoning``, ``timestamp``; ``active = 0`` after a rewind).
``--continue`` keeps the session id, so the lineage head of a cwd is its newest session.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .._process._decode import BadJson, loads
from ..events import (
    Event,
    ReasoningComplete,
    TextComplete,
    ToolCallCompleted,
    ToolCallStarted,
    ToolResult,
    TurnCompleted,
)
from ..protocols._claude_tools import tool_cmd, tool_file, tool_kind, tool_title
from . import _store_common as common
from . import _store_sqlite as db
from ._handoff import ExternalSession
from ._store_common import FileStat
from ._store_tail import PollTail, StoreParser

AGENT = "hermes"
#: The tables this reader uses (what a recording keeps of the database).
RECORD_TABLES = ("sessions", "messages")
_SESSIONS = (
    "SELECT s.id, s.cwd, s.title, s.started_at,"
    " (SELECT max(m.timestamp) FROM messages m WHERE m.session_id = s.id) AS updated,"
    " (SELECT m.content FROM messages m WHERE m.session_id = s.id AND m.role = 'user'"
    "  ORDER BY m.id LIMIT 1) AS first_prompt"
    " FROM sessions s WHERE s.parent_session_id IS NULL AND coalesce(s.archived, 0) = 0"
)
_MESSAGES = (
    "SELECT id, role, content, tool_call_id, tool_calls, tool_name, finish_reason, reasoning"
    " FROM messages WHERE session_id = ? AND id > ? AND coalesce(active, 1) = 1 ORDER BY id"
)


def hermes_home(env: Mapping[str, str] | None = None) -> Path:
    return common.env_dir(env, "HERMES_HOME", common.home(env) / ".hermes")


def database(env: Mapping[str, str] | None = None) -> Path:
    return hermes_home(env) / "state.db"


def store_roots(env: Mapping[str, str] | None = None) -> list[Path]:
    """The database's directory (the recorder copies ``state.db*`` from it)."""
    return [hermes_home(env)]


def record_files(env: Mapping[str, str] | None = None) -> list[Path]:
    """What a recording keeps: the database (the recorder folds its WAL in)."""
    return [database(env)]


def files(env: Mapping[str, str] | None = None, since: float | None = None) -> Iterator[FileStat]:
    stat = db.stat_db(database(env))
    if stat is not None and (since is None or stat.mtime > since):
        yield stat


def headers(stat: FileStat) -> list[ExternalSession]:
    out = []
    for row in db.query(stat.path, _SESSIONS, strict=True):
        sid = db.text(row, "id")
        if sid is None:
            continue
        updated = db.number(row, "updated") or db.number(row, "started_at") or stat.mtime
        out.append(
            ExternalSession(
                agent_id=AGENT,
                sid=sid,
                cwd=db.text(row, "cwd"),
                path=stat.path,
                mtime=updated,
                size=stat.size,
                title=common.one_line(db.text(row, "title") or db.text(row, "first_prompt")),
            )
        )
    return out


def scan(
    env: Mapping[str, str] | None = None, since: float | None = None
) -> Iterator[ExternalSession]:
    return db.scan_rows(files(env, since), headers, since)


def latest_sid_for_cwd(cwd: str, env: Mapping[str, str] | None = None) -> str | None:
    return db.latest_sid(scan(env), cwd)


def transcript_path(cwd: str, sid: str, env: Mapping[str, str] | None = None) -> Path | None:
    """The database, when it holds session ``sid`` of directory ``cwd``."""
    path = database(env)
    rows = db.query(path, "SELECT cwd FROM sessions WHERE id = ?", (sid,))
    found = rows and common.same_dir(db.text(rows[0], "cwd"), cwd)
    return path if found else None


class _Cursor:
    """The message rows of one session after the last one returned."""

    def __init__(self, path: Path, sid: str) -> None:
        self.path, self.sid, self.last = path, sid, 0

    def __call__(self) -> list[dict[str, Any]]:
        rows = db.query(self.path, _MESSAGES, (self.sid, self.last))
        for row in rows:
            if isinstance(row["id"], int):
                self.last = max(self.last, row["id"])
        return [dict(row) for row in rows]


def records_of(path: Path, sid: str | None = None) -> Iterator[dict[str, Any]]:
    if sid is None:
        rows = db.query(path, "SELECT id FROM sessions ORDER BY started_at DESC LIMIT 1")
        sid = db.text(rows[0], "id") if rows else None
    return iter(_Cursor(path, sid)() if sid else [])


def _calls(raw: object) -> list[Any]:
    if not isinstance(raw, str):
        return []
    try:
        value = loads(raw.encode("utf-8", "replace"))
    except BadJson:
        return []
    return value if isinstance(value, list) else []


def _arguments(raw: object) -> Any:
    if not isinstance(raw, str):
        return raw
    try:
        return loads(raw.encode("utf-8", "replace"))
    except BadJson:
        return raw


class Parser(StoreParser):
    """Hermes message rows → corral events."""

    def __init__(self) -> None:
        self._tools: dict[str, str] = {}

    def _feed(self, record: Any) -> list[Event]:
        if not isinstance(record, dict):
            return []
        role, content = record.get("role"), record.get("content")
        text = content if isinstance(content, str) else ""
        if role == "user":
            return [common.prompt_event(text)] if text.strip() else []
        if role == "tool":
            call_id = common.as_str(record.get("tool_call_id"))
            if call_id is None:
                return []
            name = common.as_str(record.get("tool_name")) or self._tools.get(call_id)
            return [ToolCallCompleted(call_id=call_id, result=ToolResult(output=text), name=name)]
        if role != "assistant":
            return []
        out: list[Event] = []
        reasoning = record.get("reasoning")
        if isinstance(reasoning, str) and reasoning.strip():
            out.append(ReasoningComplete(text=reasoning))
        if text:
            out.append(TextComplete(text=text))
        calls = _calls(record.get("tool_calls"))
        for call in calls:
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict):
                continue
            call_id = common.as_str(call.get("id")) or common.as_str(call.get("call_id"))
            name = common.as_str(function.get("name"))
            if call_id is None or name is None:
                continue
            self._tools[call_id] = name
            args = _arguments(function.get("arguments"))
            out.append(
                ToolCallStarted(
                    call_id=call_id,
                    name=name,
                    kind=tool_kind(name, args),
                    title=tool_title(name, args),
                    input=args,
                    file=tool_file(args),
                    cmd=tool_cmd(args),
                )
            )
        if not calls and text:
            out.append(TurnCompleted())
        return out


def mirror(cwd: str, sid: str, env: Mapping[str, str] | None = None) -> PollTail:
    return PollTail(_Cursor(database(env), sid), Parser)
