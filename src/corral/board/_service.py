"""The board: validated ingestion → SQLite → fan-out to viewers. One per ``corral serve`` app.

Ingestion is short (validate, one transaction, ``put_nowait`` to each viewer), so a POST is
answered once its events are stored and handed to the viewers' queues; no viewer can make it wait.
POSTs that arrive in the same event-loop turn share one transaction (group commit). Session envelopes from the service's own sessions enter through :meth:`tap`.

With ``submit`` (``corral serve`` passes the session manager's writer thread, decision 040), every
write runs there instead of on the event loop: the board's table lives in the manager's database,
and a write on the loop would wait in SQLite's busy handler for the writer's lock. Records are
published to viewers only after their commit and in commit (id) order, so a viewer's id gate never
drops an event that was committed before one it already has.
"""

from __future__ import annotations

import asyncio
import collections
import sqlite3
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from ..events import Envelope
from ..events.board import BoardEvent
from ._fanout import Fanout, Filter, Missed
from ._ingest import Ingestor, InvalidEvent, is_envelope, parse_body
from ._store import BoardStore, StoredEvent, append_op

Submit = Callable[[Callable[[sqlite3.Connection], Any]], "Future[Any]"]
"""Runs an operation inside a transaction elsewhere (a writer thread); resolves once committed."""


class IngestResult:
    """What a POST did: the events stored, and the envelopes that were not board material."""

    def __init__(self, stored: list[StoredEvent], skipped: list[str]) -> None:
        self.stored = stored
        self.skipped = skipped

    def to_json(self) -> dict[str, Any]:
        return {
            "ids": [e.id for e in self.stored],
            "stored": len(self.stored),
            "skipped": self.skipped,
        }


class Board:
    def __init__(self, db_path: str | Path, *, submit: Submit | None = None) -> None:
        self.store = BoardStore(db_path)
        self.submit = submit
        self._writes: collections.deque[
            tuple[
                asyncio.Future[list[StoredEvent]],
                Callable[[list[StoredEvent] | BaseException], None],
            ]
        ] = collections.deque()
        self.fanout = Fanout()
        self.ingestor = Ingestor()
        self.tap_failures = 0
        self._tapped: list[tuple[BoardEvent, str]] = []
        self._pending: list[
            tuple[list[tuple[BoardEvent, str]], asyncio.Future[list[StoredEvent]]]
        ] = []

    def close(self) -> None:
        self.fanout.close()
        self.store.close()

    def ingest(self, body: bytes) -> IngestResult:
        """Validate a POST body (one event or a list) and store it all, or refuse it all."""
        batch, skipped = self._validate(body)
        if self.submit is None or not batch:
            return IngestResult(self._commit(batch), skipped)
        records: list[StoredEvent] = self.submit(append_op(batch)).result()
        try:
            done = asyncio.get_running_loop().create_future()
        except RuntimeError:  # no loop, so no write of the loop's under way either
            self._publish(records)
        else:  # published after the writes submitted before it (lower ids)
            done.set_result(records)
            self._writes.append((done, self._publish))
            self._landed(done)
        return IngestResult(records, skipped)

    def _publish(self, records: list[StoredEvent] | BaseException) -> None:
        if not isinstance(records, BaseException):
            for record in records:
                self.fanout.publish(record)

    async def ingest_grouped(self, body: bytes) -> IngestResult:
        """:meth:`ingest`, sharing one transaction with the POSTs that arrive in the same loop
        turn (group commit): validation errors are raised at once, storage errors to every
        request of the group. Answered once its events are stored and handed to the viewers."""
        batch, skipped = self._validate(body)
        if not batch:
            return IngestResult([], skipped)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[StoredEvent]] = loop.create_future()
        self._pending.append((batch, future))
        if len(self._pending) == 1:
            loop.call_soon(self._flush)
        return IngestResult(await future, skipped)

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        items = [item for batch, _ in pending for item in batch]
        if self.submit is not None:
            self._write_soon(items, lambda records: self._answer(pending, records))
            return
        try:
            records: list[StoredEvent] | BaseException = self.store.append(items)
        except Exception as exc:
            records = exc
        self._answer(pending, records)

    def _answer(
        self,
        pending: list[tuple[list[tuple[BoardEvent, str]], asyncio.Future[list[StoredEvent]]]],
        records: list[StoredEvent] | BaseException,
    ) -> None:
        if isinstance(records, BaseException):
            for _, future in pending:
                if not future.done():
                    future.set_exception(records)
            return
        # Answers are scheduled before the viewers' wake-ups, so a POST is not answered after
        # every viewer's write; both happen only once the events are stored and queued.
        start = 0
        for batch, future in pending:
            if not future.done():
                future.set_result(records[start : start + len(batch)])
            start += len(batch)
        for record in records:
            self.fanout.publish(record)

    def _validate(self, body: bytes) -> tuple[list[tuple[BoardEvent, str]], list[str]]:
        items = parse_body(body)
        batch: list[tuple[BoardEvent, str]] = []
        skipped: list[str] = []
        for i, raw in enumerate(items):
            path = f"$[{i}]" if len(items) > 1 or body.lstrip()[:1] == b"[" else "$"
            if is_envelope(raw):
                envelope = self.ingestor.envelope(raw, path)
                event = self.ingestor.project(envelope, agent=envelope.source)
                if event is None:
                    skipped.append(f"{path}: {_tag(envelope)} is not board material")
                else:
                    batch.append((event, "envelope"))
            elif "v" in raw:
                batch.append((self.ingestor.validate(raw, path), "v1"))
            else:
                raise InvalidEvent("neither a v1 event (no 'v') nor a corral envelope", path)
        return batch, skipped

    def tap(self, envelope: Envelope, *, agent: str | None = None) -> None:
        """A session envelope of this service, projected onto the board (never raises). The
        envelopes tapped in one loop iteration are stored in one transaction."""
        try:
            event = self.ingestor.project(envelope, agent=agent or envelope.source)
            if event is None:
                return
            self._tapped.append((event, "envelope"))
            if len(self._tapped) == 1:
                try:
                    asyncio.get_running_loop().call_soon(self._flush_taps)
                except RuntimeError:  # no loop: store it now
                    self._flush_taps()
        except Exception:  # the board must never break a session
            self.tap_failures += 1

    def _flush_taps(self) -> None:
        batch, self._tapped = self._tapped, []
        if self.submit is not None:
            self._write_soon(batch, lambda records: self._tapped_stored(batch, records))
            return
        try:
            self._commit(batch)
        except Exception:  # the board must never break a session
            self.tap_failures += len(batch)

    def _tapped_stored(
        self, batch: list[tuple[BoardEvent, str]], records: list[StoredEvent] | BaseException
    ) -> None:
        if isinstance(records, BaseException):
            self.tap_failures += len(batch)
            return
        for record in records:
            self.fanout.publish(record)

    def _write_soon(
        self,
        batch: list[tuple[BoardEvent, str]],
        then: Callable[[list[StoredEvent] | BaseException], None],
    ) -> None:
        """Submit ``batch``; ``then`` gets its records (or the write's error), on the loop,
        in submission order (the writer commits in that order; so ids rise from call to call)."""
        assert self.submit is not None
        try:
            future = asyncio.wrap_future(self.submit(append_op(batch)))
        except Exception as exc:  # the writer is closed
            future = asyncio.get_running_loop().create_future()
            future.set_exception(exc)
        self._writes.append((future, then))
        future.add_done_callback(self._landed)

    def _landed(self, _: asyncio.Future[list[StoredEvent]]) -> None:
        while self._writes and self._writes[0][0].done():
            future, then = self._writes.popleft()
            if future.cancelled():
                result: list[StoredEvent] | BaseException = asyncio.CancelledError()
            else:
                result = future.exception() or future.result()
            try:
                then(result)
            except Exception:  # a viewer's trouble must not stop the others' delivery
                self.tap_failures += 1

    def _commit(self, batch: list[tuple[BoardEvent, str]]) -> list[StoredEvent]:
        if not batch:
            return []
        records = self.store.append(batch)
        for record in records:
            self.fanout.publish(record)
        return records

    def follow(self, after: int, wanted: Filter) -> AsyncIterator[StoredEvent | Missed]:
        return self.fanout.follow(after, wanted, self._backlog, self.store.last_id)

    def follow_batches(
        self, after: int, wanted: Filter, *, keepalive: float | None = None, coalesce: float = 0.0
    ) -> AsyncIterator[list[StoredEvent] | Missed | None]:
        return self.fanout.follow_batches(
            after, wanted, self._backlog, self.store.last_id, keepalive=keepalive, coalesce=coalesce
        )

    def _backlog(self, after: int, wanted: Filter) -> list[StoredEvent]:
        return self.store.after(
            after,
            limit=500,
            agent=wanted.agent,
            task=wanted.task,
            kind=wanted.kind,
            session=wanted.session,
        )


def _tag(envelope: Envelope) -> str:
    return str(envelope.event.__struct_config__.tag)
