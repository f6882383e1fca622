"""The database writer's group commit: order, durability before the answer, one failure, a crash."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import tempfile
import threading
import time
from concurrent.futures import Future
from pathlib import Path

import pytest

from corral import _db
from corral.errors import QueueError
from corral.sessions import (
    WRITERS,
    PromptQueue,
    PromptState,
    SessionManager,
    SessionState,
    SessionStore,
)
from corral.sessions._writer import DbWriter, Op, Writer
from corral.sessions._writer_process import ProcessDbWriter
from corral.testing import _writer_ops as ops
from corral.testing._writer_ops import Latch

from .conftest import new_session, prompt_texts, stored_session


@pytest.fixture(name="writer_kind", params=WRITERS)
def _writer_kind(request: pytest.FixtureRequest) -> str:
    """Every test here runs on the thread and on the process (decision 051)."""
    kind: str = request.param
    return kind


def _writer(kind: str, db: Path) -> Writer:
    return ProcessDbWriter(db) if kind == "process" else DbWriter(db)


def _hold(writer: Writer, folder: Path) -> tuple[Latch, Latch, Future[None]]:
    """Submit an operation that keeps the writer busy until released, so what is submitted
    meanwhile lands in one batch (its latches are files in ``folder``)."""
    folder = Path(tempfile.mkdtemp(prefix="hold-", dir=folder))
    started, release = Latch(folder / "started"), Latch(folder / "release")
    future = writer.submit(Op(ops.hold, started, release, 10.0))
    assert started.wait(10)
    return started, release, future


def test_operations_waiting_together_commit_in_one_batch_in_order(
    tmp_path: Path, writer_kind: str
) -> None:
    db = tmp_path / "w.db"
    sid = stored_session(db)
    writer = _writer(writer_kind, db)
    queue = PromptQueue(_db.connect(db), writer=writer)
    try:
        _, release, held = _hold(writer, tmp_path)
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
        assert prompt_texts(db, sid) == [f"p{i}" for i in range(20)]
    finally:
        writer.close()


def test_an_answer_comes_only_after_the_commit(tmp_path: Path, writer_kind: str) -> None:
    db = tmp_path / "w.db"
    sid = stored_session(db)
    writer = _writer(writer_kind, db)
    queue = PromptQueue(_db.connect(db), writer=writer)
    seen_at_answer: list[list[str]] = []
    try:
        _, release, _ = _hold(writer, tmp_path)
        future = writer.submit(queue._enqueue(sid, "durable", (), None, None))
        # another connection, as after a crash: what the writer was told is not there yet
        answered = threading.Event()

        def on_answer(_: Future[object]) -> None:
            seen_at_answer.append(prompt_texts(db, sid))
            answered.set()

        future.add_done_callback(on_answer)
        time.sleep(0.05)
        assert not future.done()
        assert prompt_texts(db, sid) == []
        release.set()
        assert future.result(10).text == "durable"
        assert answered.wait(10)
        assert seen_at_answer == [["durable"]]  # committed before anyone was answered
    finally:
        writer.close()


def test_a_failing_operation_rolls_back_alone(tmp_path: Path, writer_kind: str) -> None:
    db = tmp_path / "w.db"
    sid = stored_session(db)
    writer = _writer(writer_kind, db)
    queue = PromptQueue(_db.connect(db), writer=writer)
    try:
        _, release, _ = _hold(writer, tmp_path)
        first = writer.submit(queue._enqueue(sid, "a", (), None, None))
        bad = writer.submit(
            Op(ops.then_fail, queue._enqueue(sid, "b", (), None, None), "refused on purpose")
        )
        last = writer.submit(queue._enqueue(sid, "c", (), None, None))
        release.set()
        assert first.result(10).text == "a"
        assert last.result(10).text == "c"
        with pytest.raises(QueueError, match="on purpose"):
            bad.result(10)
        assert prompt_texts(db, sid) == ["a", "c"]
    finally:
        writer.close()


def test_a_failed_commit_fails_the_whole_batch(tmp_path: Path, writer_kind: str) -> None:
    db = tmp_path / "w.db"
    sid = stored_session(db)
    writer = _writer(writer_kind, db)
    queue = PromptQueue(_db.connect(db), writer=writer)
    try:
        _, release, _ = _hold(writer, tmp_path)
        good = writer.submit(queue._enqueue(sid, "good", (), None, None))
        # a foreign key checked only at COMMIT: the commit of the batch fails
        orphan = queue._enqueue("no-such-session", "orphan", (), None, None)
        bad = writer.submit(Op(ops.break_the_commit, orphan))
        release.set()
        for future in (good, bad):
            with pytest.raises(sqlite3.IntegrityError):
                future.result(10)
        assert prompt_texts(db, sid) == []
        # the writer goes on with the next batch
        assert queue.enqueue(sid, "after").text == "after"
        assert prompt_texts(db, sid) == ["after"]
    finally:
        writer.close()


def test_a_kill_in_the_middle_of_a_batch_loses_only_unanswered_operations(
    tmp_path: Path, writer_kind: str
) -> None:
    db = tmp_path / "w.db"
    sid = stored_session(db)
    answered = tmp_path / "answered"
    in_batch = tmp_path / "in-batch"
    pid = os.fork()
    if pid == 0:  # a corral that is SIGKILLed while its writer is inside a transaction
        try:
            writer = _writer(writer_kind, db)
            queue = PromptQueue(_db.connect(db), writer=writer)
            if isinstance(writer, ProcessDbWriter):
                (tmp_path / "writer-pid").write_text(str(writer.pid))
            for i in range(3):  # answered: durable
                queue.enqueue(sid, f"kept-{i}")
                with answered.open("a") as f:
                    f.write(f"kept-{i}\n")
            _, release, _ = _hold(writer, tmp_path)
            for i in range(5):
                writer.submit(queue._enqueue(sid, f"lost-{i}", (), None, None))
            writer.submit(Op(ops.stuck, str(in_batch), 60.0))
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
    assert prompt_texts(db, sid) == kept
    if writer_kind == "process":  # the writer's process died with the corral that started it
        assert _gone(int((tmp_path / "writer-pid").read_text()), 10)
    # nobody holds the write lock any more: the stuck transaction ended with its process
    conn = sqlite3.connect(db, timeout=5)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.rollback()
    finally:
        conn.close()


def _gone(pid: int, timeout: float) -> bool:
    """Whether process ``pid`` is gone or a zombie within ``timeout`` seconds (Linux)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.01)
    return False


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
    on_disk = prompt_texts(db_path, sid)
    assert all(p.text in on_disk for p in prompts)
    assert [p.position for p in prompts] == sorted(p.position for p in prompts)


async def test_a_read_after_the_claim_started_sees_the_session_busy(
    manager: SessionManager, tmp_path: Path
) -> None:
    sid = await new_session(manager)
    writer = manager.queue.writer
    assert writer is not None
    prompt = await manager.asend(sid, "[hang] long turn")
    _, release, _ = _hold(
        writer, tmp_path
    )  # the claim the delivery loop submits now waits behind this
    for _ in range(3):
        await asyncio.sleep(0)
    threading.Timer(0.3, release.set).start()
    # the read waits for the claim under way, which made the session busy in its transaction
    assert manager.get_session(sid).state == SessionState.BUSY
    assert manager.queue.get(prompt.id).state in (PromptState.SENDING, PromptState.DELIVERED)


def test_a_failing_one_statement_operation_without_savepoint_fails_alone(
    tmp_path: Path, writer_kind: str
) -> None:
    db = tmp_path / "w.db"
    sid = stored_session(db)
    writer = _writer(writer_kind, db)
    queue = PromptQueue(_db.connect(db), writer=writer)
    try:
        _, release, held = _hold(writer, tmp_path)
        first = writer.submit(queue._enqueue(sid, "a", (), None, None), savepoint=False)
        bad = writer.submit(Op(ops.duplicate_prompts), savepoint=False)  # violates the key
        last = writer.submit(queue._enqueue(sid, "c", (), None, None), savepoint=False)
        batches = writer.batches
        release.set()
        held.result(10)
        assert first.result(10).text == "a"
        with pytest.raises(sqlite3.IntegrityError):
            bad.result(10)
        assert last.result(10).text == "c"
        assert writer.batches == batches + 2  # the held one, then one transaction for the three
        assert prompt_texts(db, sid) == ["a", "c"]  # SQLite undid the failing statement alone
    finally:
        writer.close()


async def test_async_writes_of_one_batch_are_answered_by_one_loop_callback(
    tmp_path: Path, writer_kind: str
) -> None:
    db = tmp_path / "c.db"
    stored_session(db)
    writer = _writer(writer_kind, db)
    try:
        loop = asyncio.get_running_loop()
        handovers: list[object] = []
        real = loop.call_soon_threadsafe

        def counting(callback, *args):  # type: ignore[no-untyped-def]
            handovers.append(callback)
            return real(callback, *args)

        loop.call_soon_threadsafe = counting  # type: ignore[method-assign]
        _, release, held = _hold(writer, tmp_path)
        futures = [writer.submit_async(Op(ops.value, i), durable=False) for i in range(20)]
        cancelled = writer.submit_async(Op(ops.value, "late"))
        cancelled.cancel()  # before its batch ran (the thread withdraws it, the process not)
        release.set()
        assert await asyncio.wait_for(asyncio.gather(*futures), 10) == list(range(20))
        assert held.result(10) is None
        assert len(handovers) == 1  # the 20 answers (the batch after the held one): one wake-up
    finally:
        del loop.call_soon_threadsafe
        writer.close()


async def test_wait_written_returns_once_every_submitted_write_is_committed(
    tmp_path: Path, writer_kind: str
) -> None:
    db = tmp_path / "c.db"
    sid = stored_session(db)
    writer = _writer(writer_kind, db)
    try:
        _, release, held = _hold(writer, tmp_path)
        queued = writer.submit_async(Op(ops.set_model, sid, "m"))
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
    tmp_path: Path, writer_kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from corral.sessions import _store

    db = tmp_path / "s.db"
    sid = stored_session(db)
    writer = _writer(writer_kind, db)
    conn = _db.connect(db)
    try:
        store = SessionStore(conn, writer=writer)
        _, release, held = _hold(writer, tmp_path)
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
