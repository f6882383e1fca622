"""The durable, bounded prompt queue of a session (seed 001).

A prompt submitted while the session is busy is stored here and sent to the session in order, one
per turn: the next queued prompt is handed over when the current turn completes.

States and transitions::

    queued ──claim──▶ sending ──ack──▶ delivered
      │  ▲              │  └──send() raised──▶ failed ──retry──▶ queued (at the tail)
      │  └─edit (same   └──corral stopped before the ack──▶ indeterminate ──retry──▶ queued
      │     record, version+1)
      └─cancel──▶ canceled          (failed ─cancel─▶ canceled)

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

import sqlite3
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from .._db import from_db_time, to_db_time, transaction, utcnow
from ..adapters.base import Attachment
from ..errors import PromptNotFoundError, QueueError, QueueFullError
from ._models import PromptRecord, PromptState

DEFAULT_QUEUE_LIMIT = 50

_attachments = msgspec.json.Decoder(tuple[Attachment, ...])
_json = msgspec.json.Encoder()

_PENDING = (PromptState.QUEUED.value, PromptState.SENDING.value)


class PromptQueue:
    """All sessions' queues in one table; every method is one short transaction."""

    def __init__(self, conn: sqlite3.Connection, *, limit: int = DEFAULT_QUEUE_LIMIT) -> None:
        self.conn = conn
        self.limit = limit

    # ── reading ──
    def get(self, prompt_id: str) -> PromptRecord:
        row = self.conn.execute("SELECT * FROM prompts WHERE id = ?", (prompt_id,)).fetchone()
        if row is None:
            raise PromptNotFoundError(prompt_id)
        return _prompt(row)

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
        pid = prompt_id or uuid.uuid4().hex
        now = to_db_time(utcnow())
        with transaction(self.conn):
            self._check_room(session_id)
            self.conn.execute(
                """INSERT INTO prompts (id, session_id, position, state, text, attachments, launch,
                   created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (
                    pid,
                    session_id,
                    self._next_position(session_id),
                    PromptState.QUEUED.value,
                    text,
                    _json.encode(tuple(attachments)).decode(),
                    _json.encode(dict(launch or {})).decode(),
                    now,
                    now,
                ),
            )
        return self.get(pid)

    def edit(
        self, prompt_id: str, text: str, *, expected_version: int | None = None
    ) -> PromptRecord:
        """Replace a queued prompt's text in place; attachments and launch policy are kept."""
        with transaction(self.conn):
            current = self._locked(prompt_id, {PromptState.QUEUED}, "edit")
            if expected_version is not None and current.version != expected_version:
                raise QueueError(
                    f"prompt {prompt_id} is at version {current.version}, not {expected_version}",
                    prompt_id,
                )
            self.conn.execute(
                "UPDATE prompts SET text = ?, version = version + 1, updated_at = ? WHERE id = ?",
                (text, to_db_time(utcnow()), prompt_id),
            )
        return self.get(prompt_id)

    def cancel(self, prompt_id: str) -> PromptRecord:
        with transaction(self.conn):
            self._locked(prompt_id, {PromptState.QUEUED, PromptState.FAILED}, "cancel")
            self._set(prompt_id, PromptState.CANCELED)
        return self.get(prompt_id)

    def retry(self, prompt_id: str) -> PromptRecord:
        """Queue a failed or indeterminate prompt again, at the tail. Always an explicit choice."""
        with transaction(self.conn):
            current = self._locked(
                prompt_id, {PromptState.FAILED, PromptState.INDETERMINATE}, "retry"
            )
            self._check_room(current.session_id)
            self.conn.execute(
                "UPDATE prompts SET state = ?, position = ?, error = NULL, updated_at = ?"
                " WHERE id = ?",
                (
                    PromptState.QUEUED.value,
                    self._next_position(current.session_id),
                    to_db_time(utcnow()),
                    prompt_id,
                ),
            )
        return self.get(prompt_id)

    # ── the delivery side ──
    def claim_next(self, session_id: str) -> PromptRecord | None:
        """Commit the first queued prompt as ``sending`` and return it (``None`` when empty)."""
        with transaction(self.conn):
            row = self.conn.execute(
                "SELECT id FROM prompts WHERE session_id = ? AND state = ?"
                " ORDER BY position LIMIT 1",
                (session_id, PromptState.QUEUED.value),
            ).fetchone()
            if row is None:
                return None
            now = to_db_time(utcnow())
            self.conn.execute(
                "UPDATE prompts SET state = ?, attempts = attempts + 1, sending_at = ?,"
                " updated_at = ? WHERE id = ?",
                (PromptState.SENDING.value, now, now, row["id"]),
            )
        return self.get(row["id"])

    def mark_delivered(self, prompt_id: str) -> PromptRecord:
        with transaction(self.conn):
            self._locked(prompt_id, {PromptState.SENDING}, "acknowledge")
            now = to_db_time(utcnow())
            self.conn.execute(
                "UPDATE prompts SET state = ?, delivered_at = ?, updated_at = ? WHERE id = ?",
                (PromptState.DELIVERED.value, now, now, prompt_id),
            )
        return self.get(prompt_id)

    def mark_failed(self, prompt_id: str, error: str) -> PromptRecord:
        with transaction(self.conn):
            self._locked(prompt_id, {PromptState.SENDING}, "fail")
            self._set(prompt_id, PromptState.FAILED, error=error)
        return self.get(prompt_id)

    def mark_indeterminate(self, prompt_id: str, reason: str) -> PromptRecord:
        """A ``sending`` prompt whose fate is unknown (its send was cut short)."""
        with transaction(self.conn):
            self._locked(prompt_id, {PromptState.SENDING}, "mark indeterminate")
            self._set(prompt_id, PromptState.INDETERMINATE, error=reason)
        return self.get(prompt_id)

    def recover(
        self, *, skip_sessions: Iterable[str] = (), only: str | None = None
    ) -> list[PromptRecord]:
        """After a restart: every ``sending`` prompt becomes ``indeterminate`` — except in the
        sessions listed in ``skip_sessions`` (run by another live corral process); with ``only``,
        just that session's (an explicit take-over)."""
        skip = set(skip_sessions)
        with transaction(self.conn):
            rows = [
                r
                for r in self.conn.execute(
                    "SELECT id, session_id FROM prompts WHERE state = ?",
                    (PromptState.SENDING.value,),
                ).fetchall()
                if r["session_id"] not in skip and (only is None or r["session_id"] == only)
            ]
            for row in rows:
                self._set(
                    row["id"],
                    PromptState.INDETERMINATE,
                    error="corral stopped before the agent acknowledged this prompt",
                )
        return [self.get(r["id"]) for r in rows]

    def cancel_queued(self, session_id: str, reason: str) -> list[PromptRecord]:
        with transaction(self.conn):
            rows = self.conn.execute(
                "SELECT id FROM prompts WHERE session_id = ? AND state = ?",
                (session_id, PromptState.QUEUED.value),
            ).fetchall()
            for row in rows:
                self._set(row["id"], PromptState.CANCELED, error=reason)
        return [self.get(r["id"]) for r in rows]

    # ── helpers (inside a transaction) ──
    def _check_room(self, session_id: str) -> None:
        row = self.conn.execute(
            "SELECT COUNT(*) AS n FROM prompts WHERE session_id = ? AND state IN (?, ?)",
            (session_id, *_PENDING),
        ).fetchone()
        if int(row["n"]) >= self.limit:
            raise QueueFullError(self.limit)

    def _next_position(self, session_id: str) -> int:
        row = self.conn.execute(
            "SELECT COALESCE(MAX(position), 0) + 1 AS p FROM prompts WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        return int(row["p"])

    def _locked(self, prompt_id: str, allowed: set[PromptState], verb: str) -> PromptRecord:
        current = self.get(prompt_id)
        if current.state not in allowed:
            raise QueueError(f"cannot {verb} prompt {prompt_id}: it is {current.state}", prompt_id)
        return current

    def _set(self, prompt_id: str, state: PromptState, *, error: str | None = None) -> None:
        self.conn.execute(
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
