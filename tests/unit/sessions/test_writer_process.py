"""What only the writer in its own process has (decision 051): pickling, rebuilt errors, the
child's death, its signals and the bound on a full pipe. What both writers share is in
test_writer.py."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from corral import _db
from corral.errors import ConfigError, PromptNotFoundError, QueueFullError
from corral.server import Settings
from corral.sessions import PromptQueue
from corral.sessions._writer import Op
from corral.sessions._writer_process import ProcessDbWriter, WriterProcessError
from corral.testing import _writer_ops as ops
from corral.testing._writer_ops import Latch

from .conftest import prompt_texts, stored_session


def _held(writer: ProcessDbWriter, folder: Path) -> Latch:
    """Keep the child inside an operation; set the returned latch to let it go."""
    started, release = Latch(folder / "started"), Latch(folder / "release")
    writer.submit(Op(ops.hold, started, release, 10.0))
    assert started.wait(10)
    return release


def _exit_code(pid: int, timeout: float) -> int | None:
    """The child's exit status once it is gone, as ``Popen.returncode`` has it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not Path(f"/proc/{pid}").exists():
            return 0
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if state in ("Z", "X"):
            return 0
        time.sleep(0.01)
    return None


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "w.db"
    _db.connect(path).close()
    return path


def test_corral_errors_come_back_with_their_type_and_attributes(db: Path) -> None:
    sid = stored_session(db)
    writer = ProcessDbWriter(db)
    try:
        queue = PromptQueue(_db.connect(db), limit=1, writer=writer)
        queue.enqueue(sid, "first")
        with pytest.raises(QueueFullError) as full:
            queue.enqueue(sid, "second")
        assert full.value.limit == 1
        assert str(full.value) == "the prompt queue is full (1 prompts)"
        with pytest.raises(PromptNotFoundError) as missing:
            queue.edit("no-such-prompt", "text")
        assert missing.value.exit_code == 4
        assert "no-such-prompt" in str(missing.value)
        with pytest.raises(sqlite3.IntegrityError):  # a sqlite3 error keeps its type too
            writer.submit(Op(ops.duplicate_prompts), savepoint=False).result(10)
        assert prompt_texts(db, sid) == ["first"]
    finally:
        writer.close()


def test_an_operation_that_does_not_pickle_is_refused_before_it_is_sent(db: Path) -> None:
    sid = stored_session(db)
    writer = ProcessDbWriter(db)
    try:

        def closure(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM sessions")

        with pytest.raises(TypeError, match="must pickle"):
            writer.submit(closure)
        # nothing was sent, and the writer goes on
        queue = PromptQueue(_db.connect(db), writer=writer)
        assert queue.enqueue(sid, "after").text == "after"
        assert writer.wait_written(10)
        assert prompt_texts(db, sid) == ["after"]
    finally:
        writer.close()


def test_a_result_or_error_that_does_not_pickle_comes_back_by_name(db: Path) -> None:
    writer = ProcessDbWriter(db)
    try:
        with pytest.raises(TypeError, match="could not be sent back"):
            writer.submit(Op(ops.connection)).result(10)
        with pytest.raises(sqlite3.OperationalError, match=r"^QueueError: kept its connection$"):
            writer.submit(Op(ops.fail_holding_connection, "kept its connection")).result(10)
        with pytest.raises(sqlite3.OperationalError, match=r"^OddError: cannot be rebuilt$"):
            writer.submit(Op(ops.fail_oddly, "cannot be rebuilt")).result(10)
        assert writer.submit(Op(ops.value, 7)).result(10) == 7  # the writer goes on
    finally:
        writer.close()


def test_a_result_that_does_not_pickle_fails_only_its_own_write(db: Path, tmp_path: Path) -> None:
    sid = stored_session(db)
    writer = ProcessDbWriter(db)
    try:
        queue = PromptQueue(_db.connect(db), writer=writer)
        release = _held(writer, tmp_path)  # what follows lands in one batch
        before = writer.submit(queue._enqueue(sid, "before", (), None, None))
        lost = writer.submit(Op(ops.connection))
        after = writer.submit(queue._enqueue(sid, "after", (), None, None))
        release.set()
        assert before.result(10).text == "before"
        with pytest.raises(TypeError, match="committed, but its result could not be sent back"):
            lost.result(10)
        assert after.result(10).text == "after"
        assert prompt_texts(db, sid) == ["before", "after"]
    finally:
        writer.close()


def test_an_answer_that_cannot_be_read_ends_the_child_and_fails_its_writes(db: Path) -> None:
    writer = ProcessDbWriter(db)
    try:
        with pytest.raises(WriterProcessError, match="could not be read"):
            writer.submit(Op(ops.unreadable)).result(10)
        with pytest.raises(WriterProcessError, match="could not be read"):
            writer.submit(Op(ops.value, 1))
    finally:
        writer.close()


def test_when_the_child_dies_waiting_writes_fail_and_new_ones_are_refused(
    db: Path, tmp_path: Path
) -> None:
    sid = stored_session(db)
    writer = ProcessDbWriter(db)
    try:
        queue = PromptQueue(_db.connect(db), writer=writer)
        release = _held(writer, tmp_path)
        waiting = writer.submit(queue._enqueue(sid, "never", (), None, None))
        assert writer.pid is not None
        os.kill(writer.pid, signal.SIGKILL)
        with pytest.raises(WriterProcessError, match=r"ended \(exit code -9\)"):
            waiting.result(10)
        with pytest.raises(WriterProcessError, match=r"exit code -9"):
            writer.submit(Op(ops.value, 1))
        release.set()
        assert prompt_texts(db, sid) == []
    finally:
        writer.close()


def test_a_terminals_ctrl_c_and_sigterm_are_left_to_the_parent(db: Path) -> None:
    writer = ProcessDbWriter(db)
    try:
        assert writer.submit(Op(ops.value, "up")).result(10) == "up"  # the child is running
        assert writer.pid is not None
        os.kill(writer.pid, signal.SIGINT)
        os.kill(writer.pid, signal.SIGTERM)
        time.sleep(0.1)
        assert writer.submit(Op(ops.value, "still up")).result(10) == "still up"
    finally:
        writer.close()


def test_the_end_of_the_pipe_without_a_clean_close_commits_nothing_more(
    db: Path, tmp_path: Path
) -> None:
    """What the child does if its parent died where PR_SET_PDEATHSIG does not reach: the
    writes it had received but not begun are dropped, as a killed writer thread's would be."""
    sid = stored_session(db)
    writer = ProcessDbWriter(db)
    pid = writer.pid
    assert pid is not None
    queue = PromptQueue(_db.connect(db), writer=writer)
    queue.enqueue(sid, "kept")
    release = _held(writer, tmp_path)
    writer.submit(queue._enqueue(sid, "dropped", (), None, None))
    os.close(writer._out)  # the parent's end of the pipe goes, without the closing frame
    writer._out = -1
    release.set()
    assert _exit_code(pid, 10) is not None
    assert writer._proc is not None
    assert writer._proc.wait(10) == 1
    assert prompt_texts(db, sid) == ["kept"]


def test_close_commits_everything_submitted_before_it(db: Path) -> None:
    sid = stored_session(db)
    writer = ProcessDbWriter(db)
    queue = PromptQueue(_db.connect(db), writer=writer)
    futures = [writer.submit(queue._enqueue(sid, f"p{i}", (), None, None)) for i in range(50)]
    writer.close()
    assert [f.result(0).text for f in futures] == [f"p{i}" for i in range(50)]
    assert prompt_texts(db, sid) == [f"p{i}" for i in range(50)]
    assert writer._proc is not None and writer._proc.returncode == 0
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        writer.submit(Op(ops.value, 1))


async def test_cancelling_an_async_write_does_not_withdraw_it(db: Path, tmp_path: Path) -> None:
    sid = stored_session(db)
    writer = ProcessDbWriter(db)
    try:
        release = _held(writer, tmp_path)
        cancelled = writer.submit_async(Op(ops.set_model, sid, "m"))
        cancelled.cancel()
        release.set()
        assert await asyncio.to_thread(writer.wait_written, 10)
        conn = sqlite3.connect(db)
        try:  # it had been sent: it ran, and nobody was told
            assert conn.execute("SELECT model FROM sessions").fetchone()[0] == "m"
        finally:
            conn.close()
    finally:
        writer.close()


def test_serve_uses_the_process_unless_told_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CORRAL_WRITER", raising=False)
    assert Settings.from_env(db_path="x.db").writer == "process"
    monkeypatch.setenv("CORRAL_WRITER", "thread")
    assert Settings.from_env(db_path="x.db").writer == "thread"
    monkeypatch.setenv("CORRAL_WRITER", "fork")
    with pytest.raises(ConfigError, match="CORRAL_WRITER must be one of process, thread"):
        Settings.from_env(db_path="x.db")


def test_a_child_that_stops_reading_is_killed_within_the_send_bound(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from corral.sessions import _writer_process

    monkeypatch.setattr(_writer_process, "SEND_TIMEOUT", 0.2)
    writer = ProcessDbWriter(db)
    try:
        release = _held(writer, tmp_path)  # the child reads nothing while it holds
        sent, refusal = _fill(writer, 100)  # 100 × 256 KiB: more than the pipe holds
        assert refusal is not None
        assert "read nothing for 0.2 s, and was killed" in str(refusal)
        assert sent  # some went into the pipe before it was full; they fail with the child
        for future in sent:
            with pytest.raises(WriterProcessError):
                future.result(10)
        with pytest.raises(WriterProcessError, match="was killed"):
            writer.submit(Op(ops.value, 1))
        release.set()
    finally:
        writer.close()


def _fill(writer: ProcessDbWriter, n: int) -> tuple[list[Any], WriterProcessError | None]:
    """Submit ``n`` writes of 256 KiB; those sent, and the refusal that stopped them."""
    sent: list[Any] = []
    for _ in range(n):
        try:
            sent.append(writer.submit(Op(ops.value, b"x" * 262_144), durable=False))
        except WriterProcessError as exc:
            return sent, exc
    return sent, None
