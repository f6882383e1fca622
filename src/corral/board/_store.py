"""The board's SQLite table: every accepted event, numbered by one board-wide id.

``board_events.id`` is the resume point of the SSE stream (``Last-Event-ID``): strictly increasing,
never reused. Events are written with ``synchronous=NORMAL`` (WAL): a committed event survives a
crash of corral, and an OS crash may lose the last few; the board is a view, not a queue. Running
events are stored too, so a viewer that connects mid-action sees the live line.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec

from .. import _db
from .._db import Op
from ..events.board import BoardEvent


class StoredEvent(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A board event as viewers get it: the v1 fields plus its board id and arrival time."""

    id: int
    ts: datetime
    v: int
    session: str
    kind: str
    summary: str
    file: str | None = None
    cmd: str | None = None
    detail: str | None = None
    ok: bool | None = None
    running: bool | None = None
    agent: str | None = None
    task: str | None = None
    source: str = "v1"
    """``v1`` for a POSTed v1 event, ``envelope`` for a projected corral envelope."""


INSERT_ROWS = 1000
"""Rows of one multi-row ``INSERT`` at most (8 parameters each, under SQLite's 32,766)."""

_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(StoredEvent).decode


def stored(event: BoardEvent, *, id: int, ts: datetime, source: str) -> StoredEvent:
    fields: dict[str, Any] = msgspec.structs.asdict(event)
    return StoredEvent(id=id, ts=ts, source=source, **fields)


def _last_id(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT COALESCE(MAX(id), 0) FROM board_events").fetchone()
    return int(row[0])


def append_op(events: Sequence[tuple[BoardEvent, str]], *, ts: datetime | None = None) -> Op:
    """The write of :meth:`BoardStore.append` as an operation to run inside a transaction on
    any connection to the database (the session manager's writer thread runs it there)."""
    return Op(_append, tuple(events), ts or _db.utcnow())


def _append(
    conn: sqlite3.Connection, events: Sequence[tuple[BoardEvent, str]], now: datetime
) -> list[StoredEvent]:
    # The write lock is held (BEGIN IMMEDIATE), so MAX(id) + 1 is ours alone.
    next_id = _last_id(conn) + 1
    out: list[StoredEvent] = []
    rows = []
    for offset, (event, source) in enumerate(events):
        record = stored(event, id=next_id + offset, ts=now, source=source)
        out.append(record)
        rows.append(
            (
                record.id,
                _db.to_db_time(now),
                event.session,
                event.kind,
                1 if event.running else 0,
                event.agent,
                event.task,
                _encode(record).decode(),
            )
        )
    # One multi-row INSERT per chunk, not a step per row (each step is a GIL round trip on
    # the manager's writer thread, decision 040).
    for start in range(0, len(rows), INSERT_ROWS):
        chunk = rows[start : start + INSERT_ROWS]
        conn.execute(
            "INSERT INTO board_events (id, ts, session, kind, running, agent, task, body)"
            " VALUES " + ",".join(["(?,?,?,?,?,?,?,?)"] * len(chunk)),
            [v for row in chunk for v in row],
        )
    return out


class BoardStore:
    def __init__(self, path: str | Path) -> None:
        self.conn = _db.connect(path, synchronous="NORMAL")

    def close(self) -> None:
        self.conn.close()

    def append(
        self, events: Sequence[tuple[BoardEvent, str]], *, ts: datetime | None = None
    ) -> list[StoredEvent]:
        """Store ``(event, source)`` pairs in one transaction; returns them with their ids."""
        with _db.transaction(self.conn):
            return _append(self.conn, tuple(events), ts or _db.utcnow())

    def last_id(self) -> int:
        return _last_id(self.conn)

    def after(
        self,
        after: int,
        *,
        limit: int = 1000,
        agent: str | None = None,
        task: str | None = None,
        kind: str | None = None,
        session: str | None = None,
    ) -> list[StoredEvent]:
        """Events with ``id > after``, oldest first, optionally filtered."""
        where, args = _where(agent=agent, task=task, kind=kind, session=session)
        rows = self.conn.execute(
            f"SELECT body FROM board_events WHERE id > ? {where} ORDER BY id LIMIT ?",
            (after, *args, limit),
        ).fetchall()
        return [_decode(row[0]) for row in rows]

    def recent(
        self,
        limit: int = 500,
        *,
        agent: str | None = None,
        task: str | None = None,
        kind: str | None = None,
        session: str | None = None,
    ) -> list[StoredEvent]:
        """The last ``limit`` events (optionally filtered), oldest first."""
        where, args = _where(agent=agent, task=task, kind=kind, session=session)
        rows = self.conn.execute(
            f"SELECT body FROM board_events WHERE 1 {where} ORDER BY id DESC LIMIT ?",
            (*args, limit),
        ).fetchall()
        return [_decode(row[0]) for row in reversed(rows)]


def _where(**filters: str | None) -> tuple[str, list[str]]:
    # Column names come from this module's keyword names, never from the request.
    parts = [f"AND {column} = ?" for column, value in filters.items() if value is not None]
    return " ".join(parts), [value for value in filters.values() if value is not None]
