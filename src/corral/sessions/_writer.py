"""The session manager's one writer: a thread that group-commits every write, off the event loop.

Every write of a manager's database (the prompt queue's transitions, the transcript's batches,
session rows) is an *operation*: a function run on the writer's connection inside a transaction.
The writer thread takes every operation waiting when it wakes (at most ``MAX_BATCH``), runs each in
its own ``SAVEPOINT`` inside one ``BEGIN IMMEDIATE`` transaction, commits once, and only then
resolves each operation's future with its result or its own error. A batch holding a *durable*
operation (every queue transition) commits with ``synchronous=FULL`` (one fsync for the whole
batch); a batch of transcript writes only, with ``NORMAL``. So:

* a caller learns of a transition only after it is durable (what the queue's crash guarantees rest
  on: ``sending`` is on disk before a prompt is handed over, an accepted prompt is on disk before
  its HTTP ``201``);
* operations are applied in submission order (one thread, one FIFO), so a claim submitted after an
  enqueue sees it;
* an operation that raises (a :class:`~corral.errors.QueueError`, the queue bound) rolls back only
  its own savepoint; the others in the batch commit. An operation submitted with
  ``savepoint=False`` must change the database in at most one statement (SQLite undoes a failing
  statement by itself): it runs without the ``SAVEPOINT`` / ``RELEASE`` pair, two GIL round trips
  fewer (each one can wait a switch interval while the event loop runs, decision 040);
* if the commit itself fails, every operation of the batch gets that error and none took effect.

The fsync happens in the writer thread with the GIL released, and the event loop never waits for
SQLite's write lock (it would sleep in SQLite's busy handler while the writer holds it), so the
loop keeps streaming while a batch is written. See docs/decisions/035-queue-group-commit.md.
"""

from __future__ import annotations

import contextlib
import queue
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from .. import _db

T = TypeVar("T")
Operation = Callable[[sqlite3.Connection], T]

MAX_BATCH = 256
"""Operations committed in one transaction at most."""

CLOSE_TIMEOUT = 30.0
"""How long :meth:`DbWriter.close` waits for the operations already submitted."""

_Item = tuple[Callable[[sqlite3.Connection], Any], "Future[Any]", bool, bool]


class DbWriter:
    """One thread, one connection, group commit (see the module docstring)."""

    def __init__(self, db_path: str | Path, *, max_batch: int = MAX_BATCH) -> None:
        self.max_batch = max_batch
        self.batches = 0
        """Transactions committed so far (each one fsync)."""
        self.operations = 0
        """Operations that ran so far (committed or not)."""
        self._conn = _db.connect(db_path, synchronous="FULL")
        self._mode = "FULL"
        self._items: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="corral-queue-writer", daemon=True)
        self._thread.start()

    def submit(
        self, operation: Operation[T], *, durable: bool = True, savepoint: bool = True
    ) -> Future[T]:
        """Queue ``operation``; its future resolves after the batch that ran it is committed
        (fsync'd when ``durable``). ``savepoint=False``: the operation writes with one statement
        at most (see the module docstring)."""
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise sqlite3.ProgrammingError("the database writer is closed")
            self._items.put((operation, future, durable, savepoint))
        return future

    def close(self) -> None:
        """Commit what was already submitted, then stop the thread and close the connection."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._items.put(None)
        self._thread.join(CLOSE_TIMEOUT)

    # ── the thread ──
    def _run(self) -> None:
        try:
            stop = False
            while not stop:
                first = self._items.get()
                if first is None:
                    break
                batch = [first]
                while len(batch) < self.max_batch:
                    try:
                        item = self._items.get_nowait()
                    except queue.Empty:
                        break
                    if item is None:
                        stop = True
                        break
                    batch.append(item)
                self._commit(batch)
        finally:
            self._conn.close()

    def _commit(self, batch: list[_Item]) -> None:
        live = [(op, fut, sp) for op, fut, _, sp in batch if fut.set_running_or_notify_cancel()]
        if not live:
            return
        conn = self._conn
        outcomes: list[tuple[bool, Any]] = []
        try:
            self._synchronous("FULL" if any(durable for _, _, durable, _ in batch) else "NORMAL")
            conn.execute("BEGIN IMMEDIATE")
            for operation, _, savepoint in live:
                outcomes.append(self._one(conn, operation, savepoint))
            conn.execute("COMMIT")
        except BaseException as exc:  # the batch as a whole failed: nothing of it took effect
            if conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            for _, future, _ in live:
                future.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
            return
        self.batches += 1
        for (_, future, _), (ok, value) in zip(live, outcomes, strict=True):
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

    def _synchronous(self, mode: str) -> None:
        if mode != self._mode:
            self._conn.execute(f"PRAGMA synchronous = {mode}")
            self._mode = mode

    def _one(
        self, conn: sqlite3.Connection, operation: Operation[Any], savepoint: bool
    ) -> tuple[bool, Any]:
        self.operations += 1
        if not savepoint:  # one statement at most: a failing one is undone by SQLite itself
            try:
                return True, operation(conn)
            except Exception as exc:
                if not conn.in_transaction:
                    raise
                return False, exc
        conn.execute("SAVEPOINT corral_op")
        try:
            value = operation(conn)
        except Exception as exc:
            if not conn.in_transaction:  # SQLite rolled the whole transaction back itself
                raise
            conn.execute("ROLLBACK TO corral_op")
            conn.execute("RELEASE corral_op")
            return False, exc
        conn.execute("RELEASE corral_op")
        return True, value
