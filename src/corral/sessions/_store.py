"""Durable session records, their event transcripts (envelopes by seq), drafts and view state.

Group commit: :meth:`SessionStore.append_soon` queues an envelope and stores every envelope queued
in the same event-loop iteration in one transaction (a batch is also written at once when it
reaches ``MAX_BATCH``), then hands the batch to ``on_stored``: observers are told only after the
commit, so what an observer saw is always in the transcript. Every read flushes the pending batch
first, so a read never misses an appended event.
"""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from .._db import from_db_time, to_db_time, transaction, utcnow
from ..adapters.base import Attachment
from ..errors import SessionNotFoundError
from ..events import Envelope, decode_envelope, encode
from ..intents import Intent
from ._models import (
    SessionRecord,
    SessionSpec,
    SessionState,
    ViewState,
)

_attachments = msgspec.json.Decoder(tuple[Attachment, ...])
_json = msgspec.json.Encoder()

MAX_BATCH = 1024
"""Envelopes written in one transaction at most; a full batch is written without waiting."""

#: Called with each batch after its transaction, and whether the write succeeded.
OnStored = Callable[[list[Envelope], bool], None]


class SessionStore:
    """Sessions, events and view state in one SQLite connection (see :mod:`corral._db`)."""

    def __init__(self, conn: sqlite3.Connection, *, on_stored: OnStored | None = None) -> None:
        self.conn = conn
        self.on_stored = on_stored
        self._pending: list[Envelope] = []
        self._scheduled = False

    # ── sessions ──
    def create(self, spec: SessionSpec, *, session_id: str | None = None) -> SessionRecord:
        sid = session_id or uuid.uuid4().hex
        now = to_db_time(utcnow())
        with transaction(self.conn):
            self.conn.execute(
                """INSERT INTO sessions (id, adapter_id, model, effort, cwd, intent,
                   allowed_commands, state, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)""",
                (
                    sid,
                    spec.adapter_id,
                    spec.model,
                    spec.effort,
                    spec.cwd,
                    Intent(spec.intent).value if spec.intent is not None else None,
                    msgspec.json.encode(list(spec.allowed_commands)).decode(),
                    SessionState.CREATED.value,
                    now,
                    now,
                ),
            )
            self.conn.execute(
                "INSERT INTO session_view (session_id, updated_at) VALUES (?, ?)", (sid, now)
            )
        return self.get(sid)

    def get(self, session_id: str) -> SessionRecord:
        self.flush()
        row = self.conn.execute(
            "SELECT s.*, (SELECT COALESCE(MAX(seq), 0) FROM events e WHERE e.session_id = s.id)"
            " AS last_seq FROM sessions s WHERE s.id = ?",
            (session_id,),
        ).fetchone()
        if row is None:
            raise SessionNotFoundError(session_id)
        return _session(row)

    def all(self) -> list[SessionRecord]:
        self.flush()
        rows = self.conn.execute(
            "SELECT s.*, (SELECT COALESCE(MAX(seq), 0) FROM events e WHERE e.session_id = s.id)"
            " AS last_seq FROM sessions s ORDER BY s.created_at, s.id"
        ).fetchall()
        return [_session(r) for r in rows]

    def update(self, session_id: str, **fields: Any) -> None:
        allowed = {"state", "agent_session_id", "agent_info", "last_error", "model", "owner_pid"}
        if not fields or set(fields) - allowed:
            raise ValueError(f"cannot update {sorted(set(fields) - allowed)}")
        values = [
            _json.encode(v).decode()
            if k == "agent_info" and v is not None
            else (v.value if isinstance(v, SessionState) else v)
            for k, v in fields.items()
        ]
        sets = ", ".join(f"{k} = ?" for k in fields)
        with transaction(self.conn):
            cur = self.conn.execute(
                f"UPDATE sessions SET {sets}, updated_at = ? WHERE id = ?",
                (*values, to_db_time(utcnow()), session_id),
            )
        if cur.rowcount == 0:
            raise SessionNotFoundError(session_id)

    def live_owners(self) -> dict[str, int | None]:
        """Sessions recorded as live, with the pid of the process that runs them."""
        rows = self.conn.execute(
            "SELECT id, owner_pid FROM sessions WHERE state IN (?, ?, ?)",
            (SessionState.STARTING.value, SessionState.IDLE.value, SessionState.BUSY.value),
        ).fetchall()
        return {r["id"]: r["owner_pid"] for r in rows}

    def mark_disconnected(self, session_ids: Iterable[str]) -> None:
        with transaction(self.conn):
            self.conn.executemany(
                "UPDATE sessions SET state = ?, owner_pid = NULL, updated_at = ? WHERE id = ?",
                [(SessionState.DISCONNECTED.value, to_db_time(utcnow()), i) for i in session_ids],
            )

    # ── events ──
    def append_soon(self, envelope: Envelope) -> None:
        """Queue ``envelope`` for the next group commit (see the module docstring)."""
        self._pending.append(envelope)
        if len(self._pending) >= MAX_BATCH:
            self.flush()
            return
        if self._scheduled:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop: nothing to batch with
            self.flush()
            return
        self._scheduled = True
        loop.call_soon(self.flush)

    def flush(self) -> None:
        """Store the pending envelopes in one transaction, then report them to ``on_stored``."""
        self._scheduled = False
        if not self._pending:
            return
        batch, self._pending = self._pending, []
        try:
            self.append_events(batch)
            stored = True
        except sqlite3.Error:
            stored = False
        if self.on_stored is not None:
            self.on_stored(batch, stored)

    def append_events(self, envelopes: Iterable[Envelope]) -> None:
        rows = [
            (
                e.session_id,
                e.seq,
                to_db_time(e.ts),
                e.source,
                e.event.__struct_config__.tag,
                encode(e),
            )
            for e in envelopes
        ]
        with transaction(self.conn):
            self.conn.executemany(
                "INSERT INTO events (session_id, seq, ts, source, type, envelope)"
                " VALUES (?,?,?,?,?,?)",
                rows,
            )

    def events(
        self, session_id: str, *, after: int = 0, limit: int | None = None
    ) -> list[Envelope]:
        self.flush()
        rows = self.conn.execute(
            "SELECT envelope FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            (session_id, after, -1 if limit is None else limit),
        ).fetchall()
        return [decode_envelope(r["envelope"]) for r in rows]

    def last_seq(self, session_id: str) -> int:
        self.flush()
        row = self.conn.execute(
            "SELECT COALESCE(MAX(seq), 0) AS n FROM events WHERE session_id = ?", (session_id,)
        ).fetchone()
        return int(row["n"])

    # ── drafts and view state ──
    def view(self, session_id: str) -> ViewState:
        row = self.conn.execute(
            "SELECT * FROM session_view WHERE session_id = ?", (session_id,)
        ).fetchone()
        if row is None:
            self.get(session_id)  # raises when the session is unknown
            return ViewState()
        return ViewState(
            draft_text=row["draft_text"],
            draft_attachments=_attachments.decode(row["draft_attachments"]),
            edit_target=row["edit_target"],
            scroll_position=row["scroll_position"],
            follow=bool(row["follow"]),
            updated_at=from_db_time(row["updated_at"]),
        )

    def save_view(self, session_id: str, view: ViewState) -> ViewState:
        self.get(session_id)
        with transaction(self.conn):
            self.conn.execute(
                """INSERT INTO session_view (session_id, draft_text, draft_attachments, edit_target,
                   scroll_position, follow, updated_at) VALUES (?,?,?,?,?,?,?)
                   ON CONFLICT(session_id) DO UPDATE SET draft_text = excluded.draft_text,
                   draft_attachments = excluded.draft_attachments,
                   edit_target = excluded.edit_target, scroll_position = excluded.scroll_position,
                   follow = excluded.follow, updated_at = excluded.updated_at""",
                (
                    session_id,
                    view.draft_text,
                    _json.encode(view.draft_attachments).decode(),
                    view.edit_target,
                    view.scroll_position,
                    int(view.follow),
                    to_db_time(utcnow()),
                ),
            )
        return self.view(session_id)


def _session(row: sqlite3.Row) -> SessionRecord:
    return SessionRecord(
        id=row["id"],
        adapter_id=row["adapter_id"],
        model=row["model"],
        effort=row["effort"],
        cwd=row["cwd"],
        intent=Intent(row["intent"]) if row["intent"] else None,
        allowed_commands=tuple(msgspec.json.decode(row["allowed_commands"] or "[]")),
        state=SessionState(row["state"]),
        agent_session_id=row["agent_session_id"],
        agent_info=msgspec.json.decode(row["agent_info"]) if row["agent_info"] else None,
        last_error=row["last_error"],
        created_at=from_db_time(row["created_at"]),
        updated_at=from_db_time(row["updated_at"]),
        last_seq=int(row["last_seq"]),
    )
