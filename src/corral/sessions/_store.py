"""Durable session records, their event transcripts (envelopes by seq), drafts and view state.

Group commit: :meth:`SessionStore.append_soon` queues an envelope and stores every envelope queued
in the same event-loop iteration in one transaction (a batch is also written at once when it
reaches ``MAX_BATCH``), then hands the batch to ``on_stored`` after the commit. Every read flushes
the pending batch first, so a read never misses an appended event. (The manager publishes an
envelope to observers before its commit when it is inside the session's committed seq
reservation, :mod:`corral.sessions._fanout`; otherwise from ``on_stored``.)

With a :class:`~corral.sessions._writer.DbWriter` (the manager's), every write goes to the writer
thread, so the event loop never holds or waits for SQLite's write lock: a batch of envelopes is
submitted and ``on_stored`` runs on the loop once it is committed; a read waits for the writes
still under way (:meth:`SessionStore.flush`), so it still sees every appended event.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import sqlite3
import uuid
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from typing import Any, TypeVar

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
from ._writer import Op, Operation, Pending, Writer

_attachments = msgspec.json.Decoder(tuple[Attachment, ...])
_json = msgspec.json.Encoder()

MAX_BATCH = 1024
WRITTEN_TIMEOUT = 60.0
"""How long a read waits for the writes submitted before it (every wait has a bound): past it
the writer is stuck, and the read fails instead of hanging its caller."""
"""Envelopes written in one transaction at most; a full batch is written without waiting."""

#: Called with each batch after its transaction, and whether the write succeeded.
OnStored = Callable[[list[Envelope], bool], None]

T = TypeVar("T")


class SessionStore:
    """Sessions, events and view state in one SQLite connection (see :mod:`corral._db`)."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        on_stored: OnStored | None = None,
        writer: Writer | None = None,
    ) -> None:
        self.conn = conn
        self.on_stored = on_stored
        self.writer = writer
        self._pending: list[Envelope] = []
        self._pending_rows: list[tuple[Any, ...]] = []
        self._scheduled = False
        self._reported: list[asyncio.Future[Any]] = []

    # ── writing ──
    def _write(self, operation: Operation[T]) -> T:
        """Run ``operation`` in a transaction and return once it is committed."""
        if self.writer is None:
            with transaction(self.conn):
                return operation(self.conn)
        return self.writer.submit(operation, durable=False).result()

    def write_soon(self, operation: Operation[T], *, savepoint: bool = True) -> Pending[T]:
        """Submit ``operation`` (to the writer, when there is one) without waiting for it; reads
        wait for it (see :meth:`flush`). ``savepoint=False`` for an operation that writes with
        one statement at most (:meth:`DbWriter.submit <corral.sessions._writer.DbWriter.submit>`).
        On the event loop the future is an asyncio one (resolved on the loop, one callback per
        batch: :meth:`DbWriter.submit_async <corral.sessions._writer.DbWriter.submit_async>`)."""
        if self.writer is None:
            future: Future[T] = Future()
            try:
                future.set_result(self._write(operation))
            except Exception as exc:
                future.set_exception(exc)
            return future
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return self.writer.submit(operation, durable=False, savepoint=savepoint)
        return self.writer.submit_async(operation, durable=False, savepoint=savepoint)

    async def drain(self) -> None:
        """Submit what is pending and wait until every batch is stored and reported."""
        self.flush()
        while self._reported:
            await asyncio.gather(*self._reported, return_exceptions=True)

    # ── sessions ──
    def create(self, spec: SessionSpec, *, session_id: str | None = None) -> SessionRecord:
        sid = session_id or uuid.uuid4().hex
        now = to_db_time(utcnow())

        row = (
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
        )
        self._write(Op(_create_op, row))
        return self.get(sid)

    def get(self, session_id: str) -> SessionRecord:
        self.flush()
        return self.record(session_id)

    def record(self, session_id: str) -> SessionRecord:
        """:meth:`get` without waiting for the writes under way: its state and ``last_seq`` are
        the committed ones, which may be a batch behind what was emitted."""
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
        self._write(self._update(session_id, fields))

    def update_soon(self, session_id: str, **fields: Any) -> Pending[None]:
        """:meth:`update`, submitted (see :meth:`write_soon`)."""
        return self.write_soon(self._update(session_id, fields), savepoint=False)  # one UPDATE

    def _update(self, session_id: str, fields: dict[str, Any]) -> Operation[None]:
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
        sql = f"UPDATE sessions SET {sets}, updated_at = ? WHERE id = ?"

        return Op(_update_op, sql, tuple(values), session_id)

    def live_owners(self) -> dict[str, int | None]:
        """Sessions recorded as live, with the pid of the process that runs them."""
        rows = self.conn.execute(
            "SELECT id, owner_pid FROM sessions WHERE state IN (?, ?, ?)",
            (SessionState.STARTING.value, SessionState.IDLE.value, SessionState.BUSY.value),
        ).fetchall()
        return {r["id"]: r["owner_pid"] for r in rows}

    def mark_disconnected(self, session_ids: Iterable[str]) -> None:
        rows = [(SessionState.DISCONNECTED.value, to_db_time(utcnow()), i) for i in session_ids]
        self._write(
            Op(
                _executemany,
                "UPDATE sessions SET state = ?, owner_pid = NULL, updated_at = ? WHERE id = ?",
                rows,
            )
        )

    # ── events ──
    def append_soon(self, envelope: Envelope, data: bytes | None = None) -> None:
        """Queue ``envelope`` for the next group commit (see the module docstring); ``data`` is
        its JSON (``encode(envelope)``) when the caller has it already."""
        self._pending.append(envelope)
        self._pending_rows.append(_row(envelope, encode(envelope) if data is None else data))
        if len(self._pending) >= MAX_BATCH:
            self._submit_pending()
            return
        if self._scheduled:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop: nothing to batch with
            self._submit_pending()
            return
        self._scheduled = True
        loop.call_soon(self._submit_pending)

    def flush(self) -> None:
        """Store the pending envelopes in one transaction, then report them to ``on_stored``.

        With a writer: the batch is submitted and reported from the loop once committed, and this
        returns after every write under way is committed (a read after it sees them)."""
        self._submit_pending()
        # every write submitted so far (one FIFO): a claim too
        if self.writer is not None and not self.writer.wait_written(WRITTEN_TIMEOUT):
            raise sqlite3.OperationalError(
                f"the database writer committed nothing for {WRITTEN_TIMEOUT:g} s"
            )

    def _submit_pending(self) -> None:
        self._scheduled = False
        if not self._pending:
            return
        batch, self._pending = self._pending, []
        rows, self._pending_rows = self._pending_rows, []
        if self.writer is None:
            try:
                self._insert_now(rows)
            except sqlite3.Error:
                self._report(batch, False)
            else:
                self._report(batch, True)
            return
        try:
            future = self._insert_soon(rows)
        except sqlite3.Error:
            self._report(batch, False)
            return
        if not isinstance(future, asyncio.Future):  # no loop to report on: wait here
            self._report(batch, future.exception() is None)
            return
        reported = future
        self._reported.append(reported)
        reported.add_done_callback(lambda f: self._after_write(batch, f))

    def _after_write(self, batch: list[Envelope], future: asyncio.Future[Any]) -> None:
        self._reported.remove(future)
        self._report(batch, not future.cancelled() and future.exception() is None)

    def _report(self, batch: list[Envelope], stored: bool) -> None:
        if self.on_stored is not None:
            self.on_stored(batch, stored)

    def append_events(self, envelopes: Iterable[Envelope]) -> None:
        self._insert_now(_rows(envelopes))

    def _insert_now(self, rows: list[tuple[Any, ...]]) -> None:
        self._write(Op(_insert, rows))

    def append_events_soon(self, envelopes: Iterable[Envelope]) -> Pending[None]:
        """:meth:`append_events`, submitted (see :meth:`write_soon`)."""
        return self._insert_soon(_rows(envelopes))

    def _insert_soon(self, rows: list[tuple[Any, ...]]) -> Pending[None]:
        return self.write_soon(Op(_insert, rows), savepoint=len(rows) > INSERT_ROWS)

    def events(
        self, session_id: str, *, after: int = 0, limit: int | None = None
    ) -> list[Envelope]:
        self.flush()
        rows = self.conn.execute(
            "SELECT envelope FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            (session_id, after, -1 if limit is None else limit),
        ).fetchall()
        return [decode_envelope(r["envelope"]) for r in rows]

    def seq_start(self, session_id: str) -> int:
        """Where this process numbers ``session_id`` on from: after the last stored ``seq`` and
        after its seq reservation (an observer may have seen up to it, decision 046)."""
        self.flush()
        row = self.conn.execute(
            "SELECT MAX((SELECT COALESCE(MAX(seq), 0) FROM events WHERE session_id = ?),"
            " COALESCE((SELECT reserved FROM event_seq_reservations WHERE session_id = ?), 0))"
            " AS n",
            (session_id, session_id),
        ).fetchone()
        return int(row["n"])

    def reserve_seq_soon(self, session_id: str, upto: int) -> Pending[Any]:
        """Submit ``reservation = max(reservation, upto)`` (one statement, see :meth:`write_soon`)."""
        return self.write_soon(
            Op(
                _execute,
                "INSERT INTO event_seq_reservations (session_id, reserved) VALUES (?, ?)"
                " ON CONFLICT(session_id) DO UPDATE"
                " SET reserved = MAX(reserved, excluded.reserved)",
                (session_id, upto),
            ),
            savepoint=False,
        )

    def drop_seq_reservations(self, session_ids: Iterable[str]) -> Pending[Any]:
        """Submit the removal of the seq reservations of ``session_ids`` (a clean close: every
        ``seq`` handed out is stored by the batches submitted before this)."""
        rows = [(sid,) for sid in session_ids]
        return self.write_soon(
            Op(_executemany, "DELETE FROM event_seq_reservations WHERE session_id = ?", rows)
        )

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
        self._write(
            Op(
                _execute,
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
        )
        return self.view(session_id)


def _create_op(conn: sqlite3.Connection, row: tuple[Any, ...]) -> None:
    conn.execute(
        """INSERT INTO sessions (id, adapter_id, model, effort, cwd, intent,
           allowed_commands, state, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)""",
        row,
    )
    conn.execute(
        "INSERT INTO session_view (session_id, updated_at) VALUES (?, ?)", (row[0], row[-1])
    )


def _update_op(
    conn: sqlite3.Connection, sql: str, values: tuple[Any, ...], session_id: str
) -> None:
    cur = conn.execute(sql, (*values, to_db_time(utcnow()), session_id))
    if cur.rowcount == 0:
        raise SessionNotFoundError(session_id)


def _execute(conn: sqlite3.Connection, sql: str, args: Sequence[Any]) -> None:
    conn.execute(sql, args)


def _executemany(conn: sqlite3.Connection, sql: str, rows: Sequence[Sequence[Any]]) -> None:
    conn.executemany(sql, rows)


def _rows(envelopes: Iterable[Envelope]) -> list[tuple[Any, ...]]:
    return [_row(e, encode(e)) for e in envelopes]


def _row(e: Envelope, data: bytes) -> tuple[Any, ...]:
    """The ``events`` row of ``e``, whose JSON is ``data``."""
    return (e.session_id, e.seq, to_db_time(e.ts), e.source, e.event.__struct_config__.tag, data)


INSERT_ROWS = MAX_BATCH
"""Rows of one multi-row ``INSERT`` at most (6 parameters each, well under SQLite's 32,766): a
group-committed batch is one statement."""


def _insert(conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    # One statement for many rows, not ``executemany``: the writer thread releases and retakes
    # the GIL around every SQLite step, and each retake can wait a whole switch interval while
    # the event loop runs, so a batch of N rows cost N such waits (decision 040).
    for start in range(0, len(rows), INSERT_ROWS):
        chunk = rows[start : start + INSERT_ROWS]
        conn.execute(_insert_sql(len(chunk)), list(itertools.chain.from_iterable(chunk)))


@functools.lru_cache(maxsize=64)
def _insert_sql(n: int) -> str:
    values = ",".join(["(?,?,?,?,?,?)"] * n)
    return f"INSERT INTO events (session_id, seq, ts, source, type, envelope) VALUES {values}"


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
