"""The database writer's group commit: order, durability before the answer, one failure, a crash."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import threading
import time
from concurrent.futures import Future
from pathlib import Path

import pytest

from corral import _db
from corral.errors import QueueError
from corral.sessions import (
    PromptQueue,
    PromptState,
    SessionManager,
    SessionSpec,
    SessionState,
    SessionStore,
)
from corral.sessions._writer import DbWriter

from .conftest import new_session


def _session(db: Path) -> str:
    conn = _db.connect(db)
    sid = SessionStore(conn).create(SessionSpec(adapter_id="scripted")).id
    conn.close()
    return sid


def _texts(db: Path, sid: str) -> list[str]:
    """What another process would find on disk (a plain reader: WAL readers never wait)."""
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            "SELECT text FROM prompts WHERE session_id = ? ORDER BY position", (sid,)
        ).fetchall()
    finally:
        conn.close()
    return [r[0] for r in rows]


def _hold(writer: DbWriter) -> tuple[threading.Event, threading.Event, Future[None]]:
    """Submit an operation that keeps the writer busy until released, so what is submitted
    meanwhile lands in one batch."""
    started, release = threading.Event(), threading.Event()

    def op(conn: sqlite3.Connection) -> None:
        started.set()
        release.wait(10)

    future = writer.submit(op)
    assert started.wait(10)
    return started, release, future


def test_operations_waiting_together_commit_in_one_batch_in_order(tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    sid = _session(db)
    writer = DbWriter(db)
    queue = PromptQueue(_db.connect(db), writer=writer)
    try:
        _, release, held = _hold(writer)
        batches = writer.batches
        futures = [writer.submit(queue._enqueue(sid, f"p{i}", (), None, None)) for i in range(20)]
        claim = queue.claim_next_soon(sid)  # submitted after the enqueues, so it sees them
        release.set()
        records = [f.result(10) for f in futures]
        held.result(10)
        claimed = claim.result(10)
        # the held operation's batch, then one batch (one commit, one fsync) for the 21 others
        assert writer.batches == batches + 2
        assert [r.position for r in records] == list(range(1, 21))
        assert claimed is not None
        assert (claimed.text, claimed.state) == ("p0", PromptState.SENDING)
        assert _texts(db, sid) == [f"p{i}" for i in range(20)]
    finally:
        writer.close()


def test_an_answer_comes_only_after_the_commit(tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    sid = _session(db)
    writer = DbWriter(db)
    queue = PromptQueue(_db.connect(db), writer=writer)
    seen_at_answer: list[list[str]] = []
    try:
        _, release, _ = _hold(writer)
        future = writer.submit(queue._enqueue(sid, "durable", (), None, None))
        # another connection, as after a crash: what the writer was told is not there yet
        answered = threading.Event()

        def on_answer(_: Future[object]) -> None:
            seen_at_answer.append(_texts(db, sid))
            answered.set()

        future.add_done_callback(on_answer)
        time.sleep(0.05)
        assert not future.done()
        assert _texts(db, sid) == []
        release.set()
        assert future.result(10).text == "durable"
        assert answered.wait(10)
        assert seen_at_answer == [["durable"]]  # committed before anyone was answered
    finally:
        writer.close()


def test_a_failing_operation_rolls_back_alone(tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    sid = _session(db)
    writer = DbWriter(db)
    queue = PromptQueue(_db.connect(db), writer=writer)
    try:
        _, release, _ = _hold(writer)
        first = writer.submit(queue._enqueue(sid, "a", (), None, None))

        def half_then_fail(conn: sqlite3.Connection) -> None:
            queue._enqueue(sid, "b", (), None, None)(conn)
            raise QueueError("refused on purpose")

        bad = writer.submit(half_then_fail)
        last = writer.submit(queue._enqueue(sid, "c", (), None, None))
        release.set()
        assert first.result(10).text == "a"
        assert last.result(10).text == "c"
        with pytest.raises(QueueError, match="on purpose"):
            bad.result(10)
        assert _texts(db, sid) == ["a", "c"]
    finally:
        writer.close()


def test_a_failed_commit_fails_the_whole_batch(tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    sid = _session(db)
    writer = DbWriter(db)
    queue = PromptQueue(_db.connect(db), writer=writer)
    try:
        _, release, _ = _hold(writer)
        good = writer.submit(queue._enqueue(sid, "good", (), None, None))

        def breaks_the_commit(conn: sqlite3.Connection) -> None:
            # a foreign key checked only at COMMIT: the commit of the batch fails
            conn.execute("PRAGMA defer_foreign_keys = ON")
            queue._enqueue("no-such-session", "orphan", (), None, None)(conn)

        bad = writer.submit(breaks_the_commit)
        release.set()
        for future in (good, bad):
            with pytest.raises(sqlite3.IntegrityError):
                future.result(10)
        assert _texts(db, sid) == []
        # the writer goes on with the next batch
        assert queue.enqueue(sid, "after").text == "after"
        assert _texts(db, sid) == ["after"]
    finally:
        writer.close()


def test_a_kill_in_the_middle_of_a_batch_loses_only_unanswered_operations(
    tmp_path: Path,
) -> None:
    db = tmp_path / "w.db"
    sid = _session(db)
    answered = tmp_path / "answered"
    in_batch = tmp_path / "in-batch"
    pid = os.fork()
    if pid == 0:  # a corral that is SIGKILLed while its writer is inside a transaction
        try:
            writer = DbWriter(db)
            queue = PromptQueue(_db.connect(db), writer=writer)
            for i in range(3):  # answered: durable
                queue.enqueue(sid, f"kept-{i}")
                with answered.open("a") as f:
                    f.write(f"kept-{i}\n")
            _, release, _ = _hold(writer)
            for i in range(5):
                writer.submit(queue._enqueue(sid, f"lost-{i}", (), None, None))

            def stuck(conn: sqlite3.Connection) -> None:
                in_batch.write_text("yes")
                time.sleep(60)

            writer.submit(stuck)
            release.set()
            time.sleep(60)
        finally:
            os._exit(1)
    try:
        deadline = time.monotonic() + 20
        while not in_batch.exists():
            assert time.monotonic() < deadline, "the child never reached the batch"
            time.sleep(0.01)
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    kept = answered.read_text().split()
    assert kept == ["kept-0", "kept-1", "kept-2"]
    # every answered prompt survived; the batch that never committed left nothing behind
    assert _texts(db, sid) == kept


async def test_asend_is_durable_when_it_returns_and_shares_commits(
    manager: SessionManager, db_path: Path
) -> None:
    sid = await new_session(manager)
    writer = manager.queue.writer
    assert writer is not None
    before = writer.batches
    prompts = await asyncio.gather(*(manager.asend(sid, f"[hang] p{i}") for i in range(20)))
    committed = writer.batches - before
    assert committed < 20  # the prompts of the moment shared commits
    on_disk = _texts(db_path, sid)
    assert all(p.text in on_disk for p in prompts)
    assert [p.position for p in prompts] == sorted(p.position for p in prompts)


async def test_a_read_after_the_claim_started_sees_the_session_busy(
    manager: SessionManager,
) -> None:
    sid = await new_session(manager)
    writer = manager.queue.writer
    assert writer is not None
    prompt = await manager.asend(sid, "[hang] long turn")
    _, release, _ = _hold(writer)  # the claim the delivery loop submits now waits behind this
    for _ in range(3):
        await asyncio.sleep(0)
    threading.Timer(0.3, release.set).start()
    # the read waits for the claim under way, which made the session busy in its transaction
    assert manager.get_session(sid).state == SessionState.BUSY
    assert manager.queue.get(prompt.id).state in (PromptState.SENDING, PromptState.DELIVERED)


def test_a_failing_one_statement_operation_without_savepoint_fails_alone(tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    sid = _session(db)
    writer = DbWriter(db)
    queue = PromptQueue(_db.connect(db), writer=writer)
    try:
        _, release, held = _hold(writer)
        first = writer.submit(queue._enqueue(sid, "a", (), None, None), savepoint=False)

        def duplicate(conn: sqlite3.Connection) -> None:  # one INSERT that violates the key
            conn.execute(
                "INSERT INTO prompts (id, session_id, position, state, text, attachments,"
                " launch, created_at, updated_at) SELECT id, session_id, position + 100, state,"
                " text, attachments, launch, created_at, updated_at FROM prompts"
            )

        bad = writer.submit(duplicate, savepoint=False)
        last = writer.submit(queue._enqueue(sid, "c", (), None, None), savepoint=False)
        batches = writer.batches
        release.set()
        held.result(10)
        assert first.result(10).text == "a"
        with pytest.raises(sqlite3.IntegrityError):
            bad.result(10)
        assert last.result(10).text == "c"
        assert writer.batches == batches + 2  # the held one, then one transaction for the three
        assert _texts(db, sid) == ["a", "c"]  # SQLite undid the failing statement alone
    finally:
        writer.close()


async def test_async_writes_of_one_batch_are_answered_by_one_loop_callback(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    _session(db)
    writer = DbWriter(db)
    try:
        loop = asyncio.get_running_loop()
        handovers: list[object] = []
        real = loop.call_soon_threadsafe

        def counting(callback, *args):  # type: ignore[no-untyped-def]
            handovers.append(callback)
            return real(callback, *args)

        loop.call_soon_threadsafe = counting  # type: ignore[method-assign]
        _, release, held = _hold(writer)
        futures = [writer.submit_async(lambda conn, i=i: i, durable=False) for i in range(20)]
        withdrawn = writer.submit_async(lambda conn: conn.execute("SELECT 1/0"))
        withdrawn.cancel()  # before its batch ran: it never runs
        release.set()
        assert await asyncio.wait_for(asyncio.gather(*futures), 10) == list(range(20))
        assert held.result(10) is None
        assert len(handovers) == 1  # the 20 answers (the batch after the held one): one wake-up
    finally:
        del loop.call_soon_threadsafe
        writer.close()


async def test_wait_written_returns_once_every_submitted_write_is_committed(
    tmp_path: Path,
) -> None:
    db = tmp_path / "c.db"
    sid = _session(db)
    writer = DbWriter(db)
    try:
        _, release, held = _hold(writer)
        queued = writer.submit_async(
            lambda conn: conn.execute("UPDATE sessions SET model = 'm' WHERE id = ?", (sid,))
        )
        assert writer.wait_written(timeout=0.01) is False  # the held batch is still running
        release.set()
        assert await asyncio.to_thread(writer.wait_written, 10)
        conn = sqlite3.connect(db)
        try:  # committed before wait_written returned, whether or not the loop has run since
            assert conn.execute("SELECT model FROM sessions").fetchone()[0] == "m"
        finally:
            conn.close()
        await asyncio.wait_for(queued, 10)
        assert held.done()
    finally:
        writer.close()


def test_a_read_behind_a_stuck_writer_fails_within_its_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from corral.sessions import _store

    db = tmp_path / "s.db"
    sid = _session(db)
    writer = DbWriter(db)
    conn = _db.connect(db)
    try:
        store = SessionStore(conn, writer=writer)
        _, release, held = _hold(writer)
        monkeypatch.setattr(_store, "WRITTEN_TIMEOUT", 0.05)
        with pytest.raises(sqlite3.OperationalError, match=r"committed nothing for 0\.05 s"):
            store.get(sid)  # a read that waits for the writes before it
        release.set()
        held.result(10)
        assert store.get(sid).id == sid  # the writer moved on: reads work again
    finally:
        release.set()
        writer.close()
        conn.close()
