"""OpenCode's session store: one SQLite database for every session.

Where: ``$XDG_DATA_HOME`` (else ``~/.local/share``) ``/opencode/opencode.db`` (1.18.33; older
releases kept JSON files under ``storage/``, not read here). Tables: ``session`` (``id``,
``directory`` = the cwd, ``title``, ``parent_id`` for sub-agent sessions, ``time_updated`` in
ms, ``time_archived``), ``message`` (``session_id``, ``data`` JSON with ``role``) and ``part``
(``message_id``, ``data`` JSON: ``text``, ``reasoning``, ``tool`` with a ``state`` that moves
pending → running → completed | error, ``step-start``/``step-finish`` with a ``reason``). Parts
are rewritten in place as they change, so the mirror polls by ``time_updated`` and the parser
reports each part's news once. A session id is stable across ``--continue``/``--session``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .._process._decode import BadJson, loads
from ..events import (
    Event,
    ReasoningComplete,
    StopReason,
    TextComplete,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallStarted,
    ToolResult,
    TurnCompleted,
)
from ..protocols._opencode_tools import command_of, file_of, tool_kind
from . import _store_common as common
from . import _store_sqlite as db
from ._handoff import ExternalSession
from ._store_common import FileStat
from ._store_tail import PollTail, StoreParser

AGENT = "opencode"
#: The tables this reader uses (what a recording keeps of the database).
RECORD_TABLES = ("session", "message", "part")
SLACK_MS = 5_000
"""Parts updated up to this long before the newest one seen are looked at again (clocks of
concurrent writers; the per-part ``time_updated`` memory drops the repeats)."""
_STOPS = {"stop": StopReason.END_TURN, "length": StopReason.MAX_TOKENS}
_SESSIONS = (
    "SELECT s.id, s.directory, s.title, s.time_updated,"
    " (SELECT m.data FROM message m WHERE m.session_id = s.id"
    "  ORDER BY m.time_created, m.id LIMIT 1) AS first_message,"
    " (SELECT p.data FROM part p WHERE p.message_id = (SELECT m.id FROM message m"
    "  WHERE m.session_id = s.id ORDER BY m.time_created, m.id LIMIT 1)"
    "  ORDER BY p.id LIMIT 1) AS first_part"
    " FROM session s WHERE s.parent_id IS NULL AND s.time_archived IS NULL"
)
"""Top-level sessions with their first message and its first part (indexed lookups, no JSON)."""
_PARTS = (
    "SELECT p.id AS part_id, p.time_updated AS updated, p.data AS part,"
    " m.id AS message_id, m.data AS message"
    " FROM part p JOIN message m ON m.id = p.message_id"
    " WHERE p.session_id = ? AND p.time_updated >= ?"
    " ORDER BY m.time_created, m.id, p.id"
)


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    return common.xdg(env, "XDG_DATA_HOME", ".local/share") / "opencode"


def database(env: Mapping[str, str] | None = None) -> Path:
    return data_dir(env) / "opencode.db"


def store_roots(env: Mapping[str, str] | None = None) -> list[Path]:
    return [data_dir(env)]


def record_files(env: Mapping[str, str] | None = None) -> list[Path]:
    """What a recording keeps: the database (the recorder folds its WAL in)."""
    return [database(env)]


def files(env: Mapping[str, str] | None = None, since: float | None = None) -> Iterator[FileStat]:
    stat = db.stat_db(database(env))
    if stat is not None and (since is None or stat.mtime > since):
        yield stat


def _first_prompt(message: object, raw: object) -> str | None:
    first = _json(message)
    if not isinstance(first, dict) or first.get("role") != "user":
        return None
    part = _json(raw)
    if isinstance(part, dict) and part.get("type") == "text" and not part.get("synthetic"):
        return common.as_str(part.get("text"))
    return None


def headers(stat: FileStat) -> list[ExternalSession]:
    """Every top-level session in the database (one query over the ``session`` table); raises
    ``StoreUnreadable`` when the database exists but cannot be queried."""
    out = []
    for row in db.query(stat.path, _SESSIONS, strict=True):
        sid = db.text(row, "id")
        if sid is None:
            continue
        updated = db.number(row, "time_updated")
        out.append(
            ExternalSession(
                agent_id=AGENT,
                sid=sid,
                cwd=db.text(row, "directory"),
                path=stat.path,
                mtime=updated / 1000 if updated else stat.mtime,
                size=stat.size,
                title=common.one_line(
                    _first_prompt(row["first_message"], row["first_part"]) or db.text(row, "title")
                ),
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
    rows = db.query(path, "SELECT directory FROM session WHERE id = ?", (sid,))
    found = rows and common.same_dir(db.text(rows[0], "directory"), cwd)
    return path if found else None


def _json(raw: object) -> Any:
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "replace")
    if not isinstance(raw, bytes):
        return None
    try:
        return loads(raw)
    except BadJson:
        return None


class _Cursor:
    """The part rows of one session that are new or changed since the last call."""

    def __init__(self, path: Path, sid: str) -> None:
        self.path, self.sid = path, sid
        self.seen: dict[str, object] = {}
        self.since = 0

    def __call__(self) -> list[dict[str, Any]]:
        out = []
        for row in db.query(self.path, _PARTS, (self.sid, self.since - SLACK_MS)):
            part_id, updated = db.text(row, "part_id"), row["updated"]
            if part_id is None or self.seen.get(part_id) == updated:
                continue
            self.seen[part_id] = updated
            if isinstance(updated, int):
                self.since = max(self.since, updated)
            out.append(
                {
                    "part_id": part_id,
                    "message_id": db.text(row, "message_id"),
                    "part": _json(row["part"]),
                    "message": _json(row["message"]),
                }
            )
        return out


def records_of(path: Path, sid: str | None = None) -> Iterator[dict[str, Any]]:
    """The part records of ``sid`` (default: the newest session), in order."""
    if sid is None:
        rows = db.query(path, "SELECT id FROM session ORDER BY time_updated DESC LIMIT 1")
        sid = db.text(rows[0], "id") if rows else None
    return iter(_Cursor(path, sid)() if sid else [])


class Parser(StoreParser):
    """OpenCode part snapshots → corral events, each part's news once."""

    def __init__(self) -> None:
        self._done: set[str] = set()
        self._calls: dict[str, str] = {}

    def _feed(self, record: Any) -> list[Event]:
        if not isinstance(record, dict):
            return []
        part, message = record.get("part"), record.get("message")
        part_id = common.as_str(record.get("part_id"))
        if not isinstance(part, dict) or not isinstance(message, dict) or part_id is None:
            return []
        if part_id in self._done:
            return []
        kind = part.get("type")
        role = message.get("role")
        if role == "user":
            text = part.get("text") if kind == "text" and not part.get("synthetic") else None
            self._done.add(part_id)
            return [common.prompt_event(text)] if isinstance(text, str) and text.strip() else []
        if role != "assistant":
            return []
        mid = common.as_str(record.get("message_id"))
        if kind in ("text", "reasoning"):
            time = part.get("time")
            text = part.get("text")
            if not isinstance(time, dict) or time.get("end") is None or not isinstance(text, str):
                return []  # still streaming: reported once finished
            self._done.add(part_id)
            if not text:
                return []
            event = TextComplete if kind == "text" else ReasoningComplete
            return [event(text=text, message_id=mid)]
        if kind == "tool":
            return self._tool(part_id, part)
        if kind == "step-finish":
            self._done.add(part_id)
            reason = part.get("reason")
            stop = _STOPS.get(reason) if isinstance(reason, str) else None
            return [TurnCompleted(stop_reason=stop)] if stop is not None else []
        return []

    def _tool(self, part_id: str, part: dict[str, Any]) -> list[Event]:
        call_id = common.as_str(part.get("callID")) or part_id
        name = common.as_str(part.get("tool")) or "tool"
        state = part.get("state")
        if not isinstance(state, dict):
            return []
        status = state.get("status")
        tool_input = state.get("input")
        out: list[Event] = []
        if call_id not in self._calls:
            self._calls[call_id] = "started"
            cmd, path = command_of(tool_input), file_of(tool_input, state.get("metadata"))
            title = common.as_str(state.get("title")) or (
                f"{name}: {cmd or path}" if cmd or path else name
            )
            out.append(
                ToolCallStarted(
                    call_id=call_id,
                    name=name,
                    kind=tool_kind(name, tool_input),
                    title=title,
                    input=tool_input,
                    file=path,
                    cmd=cmd,
                )
            )
        if status in ("completed", "error") and self._calls[call_id] == "started":
            self._calls[call_id] = "done"
            self._done.add(part_id)
            if status == "completed":
                output = state.get("output")
                result = ToolResult(output=output if isinstance(output, str) else "")
                out.append(ToolCallCompleted(call_id=call_id, result=result, name=name))
            else:
                error = common.as_str(state.get("error")) or "error"
                out.append(ToolCallFailed(call_id=call_id, error=error, name=name))
        return out


def mirror(cwd: str, sid: str, env: Mapping[str, str] | None = None) -> PollTail:
    return PollTail(_Cursor(database(env), sid), Parser)
