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

import asyncio
import contextlib
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Protocol, TypeVar

from .. import _db
from .._db import Op

__all__ = ["Batches", "DbWriter", "Op", "Operation", "Pending", "Writer"]

T = TypeVar("T")
Operation = Callable[[sqlite3.Connection], T]

MAX_BATCH = 256
"""Operations committed in one transaction at most."""

CLOSE_TIMEOUT = 30.0
"""How long :meth:`DbWriter.close` waits for the operations already submitted."""

_Item = tuple[
    Callable[[sqlite3.Connection], Any],
    "Future[Any] | asyncio.Future[Any]",
    bool,
    bool,
    "asyncio.AbstractEventLoop | None",
]
_Outcome = tuple["asyncio.Future[Any]", bool, Any]

Pending = Future[T] | asyncio.Future[T]
"""A submitted write: a concurrent future, or an asyncio one on the event loop."""


class Writer(Protocol):
    """What the store and the queue need of a writer: :class:`DbWriter` (a thread) or
    :class:`~corral.sessions._writer_process.ProcessDbWriter` (a process)."""

    @property
    def batches(self) -> int: ...

    @property
    def operations(self) -> int: ...

    def submit(
        self, operation: Operation[T], *, durable: bool = True, savepoint: bool = True
    ) -> Future[T]: ...

    def submit_async(
        self, operation: Operation[T], *, durable: bool = True, savepoint: bool = True
    ) -> asyncio.Future[T]: ...

    def wait_written(self, timeout: float | None = None) -> bool: ...

    def close(self) -> None: ...


class Batches:
    """One write connection's group commits: the writer thread's, and a writer process's
    (:mod:`corral.sessions._writer_process`)."""

    def __init__(self, db_path: str | Path) -> None:
        self.conn = _db.connect(db_path, synchronous="FULL")
        self.mode = "FULL"
        self.batches = 0
        self.operations = 0

    def commit(self, batch: Sequence[tuple[Operation[Any], bool, bool]]) -> list[tuple[bool, Any]]:
        """Run each ``(operation, durable, savepoint)`` of ``batch`` in one transaction, with
        ``synchronous=FULL`` when one is durable; each operation's ``(ok, result or error)``.
        If the transaction as a whole fails, every operation gets its error (and a
        ``BaseException`` such as ``KeyboardInterrupt`` is raised after the rollback)."""
        conn = self.conn
        outcomes: list[tuple[bool, Any]] = []
        try:
            mode = "FULL" if any(durable for _, durable, _ in batch) else "NORMAL"
            if mode != self.mode:
                conn.execute(f"PRAGMA synchronous = {mode}")
                self.mode = mode
            conn.execute("BEGIN IMMEDIATE")
            for operation, _, savepoint in batch:
                outcomes.append(self._one(conn, operation, savepoint))
            conn.execute("COMMIT")
        except BaseException as exc:  # the batch as a whole failed: nothing of it took effect
            if conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            if not isinstance(exc, Exception):
                raise
            return [(False, exc)] * len(batch)
        self.batches += 1
        return outcomes

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


class Progress:
    """What both writers count: operations submitted and done, and the wait on the two."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        """Held to submit (and to close): ``_submitted`` counts in submission order."""
        self._closed = False
        self._submitted = 0
        self._done = 0
        self._progress = threading.Condition()

    def wait_written(self, timeout: float | None = None) -> bool:
        """Block until every operation submitted before this call has run and its batch is
        committed (or failed). False when ``timeout`` passed first."""
        with self._lock:
            target = self._submitted
        with self._progress:
            return self._progress.wait_for(lambda: self._done >= target, timeout)

    def _count_done(self, n: int) -> None:
        with self._progress:
            self._done += n
            self._progress.notify_all()


class DbWriter(Progress):
    """One thread, one connection, group commit (see the module docstring)."""

    def __init__(self, db_path: str | Path, *, max_batch: int = MAX_BATCH) -> None:
        super().__init__()
        self.max_batch = max_batch
        self._batches = Batches(db_path)
        self._items: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="corral-queue-writer", daemon=True)
        self._thread.start()

    def submit(
        self, operation: Operation[T], *, durable: bool = True, savepoint: bool = True
    ) -> Future[T]:
        """Queue ``operation``; its future resolves after the batch that ran it is committed
        (fsync'd when ``durable``). ``savepoint=False``: the operation writes with one statement
        at most (see the module docstring)."""
        future: Future[T] = Future()
        self._put((operation, future, durable, savepoint, None))
        return future

    def submit_async(
        self, operation: Operation[T], *, durable: bool = True, savepoint: bool = True
    ) -> asyncio.Future[T]:
        """:meth:`submit` for the running event loop: an asyncio future, resolved on the loop
        once its batch is committed. The futures of one batch are resolved by one loop callback
        (one wake-up of the loop per batch, not a thread-safe hand-over per write). Cancelling
        the future before its batch runs withdraws the operation; after, it still runs."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._put((operation, future, durable, savepoint, loop))
        return future

    def _put(self, item: _Item) -> None:
        with self._lock:
            if self._closed:
                raise sqlite3.ProgrammingError("the database writer is closed")
            self._submitted += 1
            self._items.put(item)

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
                try:
                    self._commit(batch)
                finally:
                    self._count_done(len(batch))
        finally:
            self._batches.conn.close()

    @property
    def batches(self) -> int:
        """Transactions committed so far (each one fsync)."""
        return self._batches.batches

    @property
    def operations(self) -> int:
        """Operations that ran so far (committed or not)."""
        return self._batches.operations

    def _commit(self, batch: list[_Item]) -> None:
        live = [item for item in batch if _start(item)]
        if not live:
            return
        try:
            outcomes = self._batches.commit([(item[0], item[2], item[3]) for item in live])
        except BaseException as exc:
            self._answer(live, [(False, exc)] * len(live))
            raise
        self._answer(live, outcomes)

    def _answer(self, live: list[_Item], outcomes: list[tuple[bool, Any]]) -> None:
        resolve(
            (future, loop, ok, value)
            for (_, future, _, _, loop), (ok, value) in zip(live, outcomes, strict=True)
        )


def resolve(
    answers: Iterable[tuple[Pending[Any], asyncio.AbstractEventLoop | None, bool, Any]],
) -> None:
    """Settle each ``(future, its loop or None, ok, result or error)``: a concurrent future at
    once, the asyncio ones with one callback per loop (one wake-up for a whole batch)."""
    on_loops: dict[asyncio.AbstractEventLoop, list[_Outcome]] = {}
    for future, loop, ok, value in answers:
        if loop is not None:
            on_loops.setdefault(loop, []).append((future, ok, value))  # type: ignore[arg-type]
        elif ok:
            future.set_result(value)
        else:
            future.set_exception(value)
    for loop, batch in on_loops.items():
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(_settle, batch)


def _start(item: _Item) -> bool:
    """Whether ``item`` still runs: not cancelled before its batch (a concurrent future is then
    marked running, so it can no longer be cancelled)."""
    future, loop = item[1], item[4]
    if loop is None:
        return bool(future.set_running_or_notify_cancel())  # type: ignore[union-attr]
    return not future.cancelled()


def _settle(answers: list[_Outcome]) -> None:
    """On the loop: resolve a batch's asyncio futures (one callback for the whole batch)."""
    for future, ok, value in answers:
        if future.cancelled():
            continue
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)
