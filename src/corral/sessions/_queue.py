"""The durable, bounded prompt queue of a session (seed 001).

A prompt submitted while the session is busy is stored here and sent to the session in order, one
per turn: the next queued prompt is handed over when the current turn completes.

States and transitions::

    queued ──claim──▶ sending ──ack──▶ delivered
      │  ▲              │  └──send() raised──▶ failed ──retry──▶ queued (at the tail)
      │  └─edit (same   └──corral stopped before the ack──▶ indeterminate ──retry──▶ queued
      │     record, version+1)
      └─cancel──▶ canceled          (failed ─cancel─▶ canceled)

Every transition is one transaction; under a :class:`~corral.sessions.SessionManager` they run
on its writer thread, which commits the transitions of the moment together (one fsync) and answers
each caller only after the commit (:mod:`corral.sessions._writer`, decision 035).

Delivery is **at most once**. The ``sending`` record (state, ``sending_at``, ``attempts+1``) is
committed (``synchronous=FULL``) *before* the prompt is handed to the adapter, and the prompt is
acknowledged (``delivered``) at the driver's ack point: by default when the adapter's ``send()``
returns; a driver that knows better calls the ack hook itself (see
:meth:`corral.BaseAdapter.send_acknowledged` and docs/sessions.md for each protocol's point).

**Indeterminate** means: corral handed the prompt over, or was about to, and stopped before it could
record the ack — the agent may or may not have received it. What a crash does: on the next start,
:meth:`PromptQueue.recover` turns every ``sending`` prompt into ``indeterminate``. An indeterminate
prompt is never replayed automatically; only an explicit :meth:`PromptQueue.retry` queues it again
(check the conversation for a duplicate first). ``queued`` prompts are untouched by a crash and are
delivered, in order, once the session is resumed.

If the adapter accepted a prompt but writing ``delivered`` fails locally (a history-write failure),
the prompt is *not* sent again: it stays ``sending`` and the manager retries only the bookkeeping
write; if corral stops first, it becomes ``indeterminate`` like any other unacknowledged prompt.

Edits replace the same durable record (same id, same position, same attachments and launch policy;
``version`` + 1) and only apply while the prompt is ``queued``: claiming and editing both run in
``BEGIN IMMEDIATE`` transactions, so an edit either lands before the claim (the new text is sent) or
fails with :class:`~corral.errors.QueueError` after it. Canceled and indeterminate prompts are kept,
so a transcript never implies a delivery that was not confirmed.

The queue is bounded per session: more than ``limit`` pending (``queued`` + ``sending``) prompts
raises :class:`~corral.errors.QueueFullError`. There are no leases and no automatic retries.
"""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any, TypeVar

import msgspec

from .._db import from_db_time, to_db_time, transaction, utcnow
from ..adapters.base import Attachment
from ..errors import PromptNotFoundError, QueueError, QueueFullError
from ._models import PromptRecord, PromptState, SessionState
from ._writer import Op, Operation, Writer

DEFAULT_QUEUE_LIMIT = 50

_attachments = msgspec.json.Decoder(tuple[Attachment, ...])
_json = msgspec.json.Encoder()

_PENDING = (PromptState.QUEUED.value, PromptState.SENDING.value)

T = TypeVar("T")


class PromptQueue:
    """All sessions' queues in one table; every transition is one short transaction.

    ``conn`` serves the reads. Without a ``writer`` the transitions run on ``conn`` too, one
    transaction each; with a :class:`~corral.sessions._writer.DbWriter` they go to its
    thread and are group-committed. Each transition has a blocking form (``enqueue``) that returns
    once it is durable and an async form (``aenqueue``) that awaits the same without blocking the
    event loop; ``mark_delivered_soon`` only submits and returns the future.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        limit: int = DEFAULT_QUEUE_LIMIT,
        writer: Writer | None = None,
    ) -> None:
        self.conn = conn
        self.limit = limit
        self.writer = writer

    # ── running a transition ──
    def _submit(self, operation: Operation[T], *, savepoint: bool = True) -> Future[T]:
        """``savepoint=False`` for a transition that writes with one statement (the enqueue's
        ``INSERT``, the ack's ``UPDATE``): it checks first and raises before writing anything."""
        if self.writer is not None:
            return self.writer.submit(operation, savepoint=savepoint)
        future: Future[T] = Future()
        try:
            with transaction(self.conn):
                value = operation(self.conn)
        except Exception as exc:
            future.set_exception(exc)
        else:
            future.set_result(value)
        return future

    def _run(self, operation: Operation[T], *, savepoint: bool = True) -> T:
        return self._submit(operation, savepoint=savepoint).result()

    async def _arun(self, operation: Operation[T], *, savepoint: bool = True) -> T:
        return await self._submit_on_loop(operation, savepoint=savepoint)

    def _submit_on_loop(
        self, operation: Operation[T], *, savepoint: bool = True
    ) -> asyncio.Future[T]:
        """:meth:`_submit` for the running loop: resolved there, one loop callback per batch
        (:meth:`DbWriter.submit_async <corral.sessions._writer.DbWriter.submit_async>`)."""
        if self.writer is not None:
            return self.writer.submit_async(operation, savepoint=savepoint)
        return asyncio.wrap_future(self._submit(operation, savepoint=savepoint))

    # ── reading ──
    def get(self, prompt_id: str) -> PromptRecord:
        return _get(self.conn, prompt_id)

    def prompts(
        self, session_id: str, states: Iterable[PromptState] | None = None
    ) -> list[PromptRecord]:
        sql = "SELECT * FROM prompts WHERE session_id = ?"
        args: list[Any] = [session_id]
        if states is not None:
            wanted = [PromptState(s).value for s in states]
            sql += f" AND state IN ({','.join('?' * len(wanted))})"
            args += wanted
        rows = self.conn.execute(sql + " ORDER BY position", args).fetchall()
        return [_prompt(r) for r in rows]

    def counts(self, session_id: str) -> dict[str, int]:
        rows = self.conn.execute(
            "SELECT state, COUNT(*) AS n FROM prompts WHERE session_id = ? GROUP BY state",
            (session_id,),
        ).fetchall()
        return {r["state"]: int(r["n"]) for r in rows}

    # ── the caller's operations ──
    def enqueue(
        self,
        session_id: str,
        text: str,
        *,
        attachments: Sequence[Attachment] = (),
        launch: Mapping[str, Any] | None = None,
        prompt_id: str | None = None,
    ) -> PromptRecord:
        return self._run(
            self._enqueue(session_id, text, attachments, launch, prompt_id), savepoint=False
        )

    async def aenqueue(
        self,
        session_id: str,
        text: str,
        *,
        attachments: Sequence[Attachment] = (),
        launch: Mapping[str, Any] | None = None,
        prompt_id: str | None = None,
    ) -> PromptRecord:
        return await self._arun(
            self._enqueue(session_id, text, attachments, launch, prompt_id), savepoint=False
        )

    def _enqueue(
        self,
        session_id: str,
        text: str,
        attachments: Sequence[Attachment],
        launch: Mapping[str, Any] | None,
        prompt_id: str | None,
    ) -> Operation[PromptRecord]:
        pid = prompt_id or uuid.uuid4().hex
        encoded_attachments = _json.encode(tuple(attachments)).decode()
        encoded_launch = _json.encode(dict(launch or {})).decode()
        return Op(
            _enqueue_op, pid, session_id, text, encoded_attachments, encoded_launch, self.limit
        )

    def edit(
        self, prompt_id: str, text: str, *, expected_version: int | None = None
    ) -> PromptRecord:
        """Replace a queued prompt's text in place; attachments and launch policy are kept."""
        return self._run(_edit(prompt_id, text, expected_version))

    async def aedit(
        self, prompt_id: str, text: str, *, expected_version: int | None = None
    ) -> PromptRecord:
        return await self._arun(_edit(prompt_id, text, expected_version))

    def cancel(self, prompt_id: str) -> PromptRecord:
        return self._run(_cancel(prompt_id))

    async def acancel(self, prompt_id: str) -> PromptRecord:
        return await self._arun(_cancel(prompt_id))

    def retry(self, prompt_id: str) -> PromptRecord:
        """Queue a failed or indeterminate prompt again, at the tail. Always an explicit choice."""
        return self._run(_retry(prompt_id, self.limit))

    async def aretry(self, prompt_id: str) -> PromptRecord:
        return await self._arun(_retry(prompt_id, self.limit))

    # ── the delivery side ──
    def claim_next(self, session_id: str) -> PromptRecord | None:
        """Commit the first queued prompt as ``sending`` and return it (``None`` when empty)."""
        return self._run(_claim_next(session_id))

    def claim_next_soon(self, session_id: str) -> Future[PromptRecord | None]:
        """:meth:`claim_next`, submitted: the future resolves once ``sending`` is durable. The
        same transaction records the session as busy when a prompt was claimed, so a read that
        waits for this write never sees the session idle with its prompt already taken."""
        return self._submit(_claim_next(session_id, mark_busy=True))

    def mark_delivered(self, prompt_id: str) -> PromptRecord:
        return self._run(_mark_delivered(prompt_id), savepoint=False)

    def mark_delivered_soon(self, prompt_id: str) -> asyncio.Future[PromptRecord]:
        """:meth:`mark_delivered`, submitted from the event loop (the ack hook must not wait for
        the fsync); the future resolves on the loop once ``delivered`` is durable."""
        return self._submit_on_loop(_mark_delivered(prompt_id), savepoint=False)

    def mark_failed(self, prompt_id: str, error: str) -> PromptRecord:
        return self._run(_transition(prompt_id, {PromptState.SENDING}, "fail", FAILED, error))

    async def amark_failed(self, prompt_id: str, error: str) -> PromptRecord:
        return await self._arun(
            _transition(prompt_id, {PromptState.SENDING}, "fail", FAILED, error)
        )

    def mark_indeterminate(self, prompt_id: str, reason: str) -> PromptRecord:
        """A ``sending`` prompt whose fate is unknown (its send was cut short)."""
        return self._run(
            _transition(
                prompt_id, {PromptState.SENDING}, "mark indeterminate", INDETERMINATE, reason
            )
        )

    def recover(
        self, *, skip_sessions: Iterable[str] = (), only: str | None = None
    ) -> list[PromptRecord]:
        """After a restart: every ``sending`` prompt becomes ``indeterminate`` — except in the
        sessions listed in ``skip_sessions`` (run by another live corral process); with ``only``,
        just that session's (an explicit take-over)."""
        return self._run(Op(_recover_op, frozenset(skip_sessions), only))

    def cancel_queued(self, session_id: str, reason: str) -> list[PromptRecord]:
        return self._run(Op(_cancel_queued_op, session_id, reason))


FAILED = PromptState.FAILED
INDETERMINATE = PromptState.INDETERMINATE


# ── the transitions (each runs inside one transaction, on the connection it is given; each is
# an Op, a module-level function and its arguments, so a writer in another process can run it) ──
def _enqueue_op(
    conn: sqlite3.Connection,
    pid: str,
    session_id: str,
    text: str,
    encoded_attachments: str,
    encoded_launch: str,
    limit: int,
) -> PromptRecord:
    now = to_db_time(utcnow())
    _check_room(conn, session_id, limit)
    conn.execute(
        """INSERT INTO prompts (id, session_id, position, state, text, attachments, launch,
           created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        (
            pid,
            session_id,
            _next_position(conn, session_id),
            PromptState.QUEUED.value,
            text,
            encoded_attachments,
            encoded_launch,
            now,
            now,
        ),
    )
    return _get(conn, pid)


def _edit(prompt_id: str, text: str, expected_version: int | None) -> Operation[PromptRecord]:
    return Op(_edit_op, prompt_id, text, expected_version)


def _edit_op(
    conn: sqlite3.Connection, prompt_id: str, text: str, expected_version: int | None
) -> PromptRecord:
    current = _locked(conn, prompt_id, {PromptState.QUEUED}, "edit")
    if expected_version is not None and current.version != expected_version:
        raise QueueError(
            f"prompt {prompt_id} is at version {current.version}, not {expected_version}",
            prompt_id,
        )
    conn.execute(
        "UPDATE prompts SET text = ?, version = version + 1, updated_at = ? WHERE id = ?",
        (text, to_db_time(utcnow()), prompt_id),
    )
    return _get(conn, prompt_id)


def _cancel(prompt_id: str) -> Operation[PromptRecord]:
    return _transition(
        prompt_id, {PromptState.QUEUED, PromptState.FAILED}, "cancel", PromptState.CANCELED, None
    )


def _retry(prompt_id: str, limit: int) -> Operation[PromptRecord]:
    return Op(_retry_op, prompt_id, limit)


def _retry_op(conn: sqlite3.Connection, prompt_id: str, limit: int) -> PromptRecord:
    current = _locked(conn, prompt_id, {PromptState.FAILED, PromptState.INDETERMINATE}, "retry")
    _check_room(conn, current.session_id, limit)
    conn.execute(
        "UPDATE prompts SET state = ?, position = ?, error = NULL, updated_at = ? WHERE id = ?",
        (
            PromptState.QUEUED.value,
            _next_position(conn, current.session_id),
            to_db_time(utcnow()),
            prompt_id,
        ),
    )
    return _get(conn, prompt_id)


def _claim_next(session_id: str, *, mark_busy: bool = False) -> Operation[PromptRecord | None]:
    return Op(_claim_next_op, session_id, mark_busy)


def _claim_next_op(
    conn: sqlite3.Connection, session_id: str, mark_busy: bool
) -> PromptRecord | None:
    row = conn.execute(
        "SELECT id FROM prompts WHERE session_id = ? AND state = ? ORDER BY position LIMIT 1",
        (session_id, PromptState.QUEUED.value),
    ).fetchone()
    if row is None:
        return None
    now = to_db_time(utcnow())
    conn.execute(
        "UPDATE prompts SET state = ?, attempts = attempts + 1, sending_at = ?,"
        " updated_at = ? WHERE id = ?",
        (PromptState.SENDING.value, now, now, row["id"]),
    )
    if mark_busy:
        conn.execute(
            "UPDATE sessions SET state = ?, updated_at = ? WHERE id = ?",
            (SessionState.BUSY.value, now, session_id),
        )
    return _get(conn, row["id"])


def _mark_delivered(prompt_id: str) -> Operation[PromptRecord]:
    return Op(_mark_delivered_op, prompt_id)


def _mark_delivered_op(conn: sqlite3.Connection, prompt_id: str) -> PromptRecord:
    _locked(conn, prompt_id, {PromptState.SENDING}, "acknowledge")
    now = to_db_time(utcnow())
    conn.execute(
        "UPDATE prompts SET state = ?, delivered_at = ?, updated_at = ? WHERE id = ?",
        (PromptState.DELIVERED.value, now, now, prompt_id),
    )
    return _get(conn, prompt_id)


def _transition(
    prompt_id: str, allowed: set[PromptState], verb: str, to: PromptState, error: str | None
) -> Operation[PromptRecord]:
    return Op(_transition_op, prompt_id, frozenset(allowed), verb, to, error)


def _transition_op(
    conn: sqlite3.Connection,
    prompt_id: str,
    allowed: frozenset[PromptState],
    verb: str,
    to: PromptState,
    error: str | None,
) -> PromptRecord:
    _locked(conn, prompt_id, allowed, verb)
    _set(conn, prompt_id, to, error=error)
    return _get(conn, prompt_id)


def _recover_op(
    conn: sqlite3.Connection, skip: frozenset[str], only: str | None
) -> list[PromptRecord]:
    rows = [
        r
        for r in conn.execute(
            "SELECT id, session_id FROM prompts WHERE state = ?",
            (PromptState.SENDING.value,),
        ).fetchall()
        if r["session_id"] not in skip and (only is None or r["session_id"] == only)
    ]
    for row in rows:
        _set(
            conn,
            row["id"],
            PromptState.INDETERMINATE,
            error="corral stopped before the agent acknowledged this prompt",
        )
    return [_get(conn, r["id"]) for r in rows]


def _cancel_queued_op(conn: sqlite3.Connection, session_id: str, reason: str) -> list[PromptRecord]:
    rows = conn.execute(
        "SELECT id FROM prompts WHERE session_id = ? AND state = ?",
        (session_id, PromptState.QUEUED.value),
    ).fetchall()
    for row in rows:
        _set(conn, row["id"], PromptState.CANCELED, error=reason)
    return [_get(conn, r["id"]) for r in rows]


# ── helpers (inside a transaction) ──
def _get(conn: sqlite3.Connection, prompt_id: str) -> PromptRecord:
    row = conn.execute("SELECT * FROM prompts WHERE id = ?", (prompt_id,)).fetchone()
    if row is None:
        raise PromptNotFoundError(prompt_id)
    return _prompt(row)


def _check_room(conn: sqlite3.Connection, session_id: str, limit: int) -> None:
    row = conn.execute(
        "SELECT COUNT(*) AS n FROM prompts WHERE session_id = ? AND state IN (?, ?)",
        (session_id, *_PENDING),
    ).fetchone()
    if int(row["n"]) >= limit:
        raise QueueFullError(limit)


def _next_position(conn: sqlite3.Connection, session_id: str) -> int:
    row = conn.execute(
        "SELECT COALESCE(MAX(position), 0) + 1 AS p FROM prompts WHERE session_id = ?",
        (session_id,),
    ).fetchone()
    return int(row["p"])


def _locked(
    conn: sqlite3.Connection,
    prompt_id: str,
    allowed: set[PromptState] | frozenset[PromptState],
    verb: str,
) -> PromptRecord:
    current = _get(conn, prompt_id)
    if current.state not in allowed:
        raise QueueError(f"cannot {verb} prompt {prompt_id}: it is {current.state}", prompt_id)
    return current


def _set(
    conn: sqlite3.Connection, prompt_id: str, state: PromptState, *, error: str | None = None
) -> None:
    conn.execute(
        "UPDATE prompts SET state = ?, error = COALESCE(?, error), updated_at = ? WHERE id = ?",
        (state.value, error, to_db_time(utcnow()), prompt_id),
    )


def _prompt(row: sqlite3.Row) -> PromptRecord:
    return PromptRecord(
        id=row["id"],
        session_id=row["session_id"],
        position=int(row["position"]),
        state=PromptState(row["state"]),
        text=row["text"],
        attachments=_attachments.decode(row["attachments"]),
        launch=msgspec.json.decode(row["launch"]),
        version=int(row["version"]),
        attempts=int(row["attempts"]),
        error=row["error"],
        created_at=from_db_time(row["created_at"]),
        updated_at=from_db_time(row["updated_at"]),
        sending_at=from_db_time(row["sending_at"]) if row["sending_at"] else None,
        delivered_at=from_db_time(row["delivered_at"]) if row["delivered_at"] else None,
    )
