"""Group commit: the events of one loop iteration share one transaction, observers hear of them
only after it, and a read never misses an appended event."""

from __future__ import annotations

import asyncio
from pathlib import Path

from corral import _db
from corral.events import Sequencer, TextDelta
from corral.sessions import SessionManager, SessionSpec
from corral.sessions._store import MAX_BATCH, SessionStore

from .conftest import new_session


def _store(tmp_path: Path) -> tuple[SessionStore, list[tuple[list[int], bool]], str]:
    conn = _db.connect(tmp_path / "c.db", synchronous="NORMAL")
    batches: list[tuple[list[int], bool]] = []
    store = SessionStore(conn, on_stored=lambda b, ok: batches.append(([e.seq for e in b], ok)))
    sid = store.create(SessionSpec(adapter_id="scripted")).id
    return store, batches, sid


async def test_one_iteration_is_one_transaction_then_published(tmp_path: Path) -> None:
    store, batches, sid = _store(tmp_path)
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    seq = Sequencer(sid, "t")
    for i in range(50):
        store.append_soon(seq.wrap(TextDelta(text=str(i))))
    assert batches == []  # nobody is told before the commit
    await asyncio.sleep(0)
    assert batches == [(list(range(1, 51)), True)]
    assert sum(s.startswith("BEGIN") for s in statements) == 1
    assert [e.seq for e in store.events(sid)] == list(range(1, 51))


async def test_a_read_flushes_what_is_pending(tmp_path: Path) -> None:
    store, batches, sid = _store(tmp_path)
    seq = Sequencer(sid, "t")
    store.append_soon(seq.wrap(TextDelta(text="a")))
    # same iteration, before the scheduled flush: the read still sees the event
    assert store.last_seq(sid) == 1
    assert store.get(sid).last_seq == 1
    assert batches == [([1], True)]
    await asyncio.sleep(0)
    assert batches == [([1], True)]  # the scheduled flush finds nothing left


async def test_a_full_batch_is_written_at_once(tmp_path: Path) -> None:
    store, batches, sid = _store(tmp_path)
    seq = Sequencer(sid, "t")
    for i in range(MAX_BATCH + 3):
        store.append_soon(seq.wrap(TextDelta(text=str(i))))
    assert [len(b) for b, _ in batches] == [MAX_BATCH]
    await asyncio.sleep(0)
    assert [len(b) for b, _ in batches] == [MAX_BATCH, 3]


def test_without_an_event_loop_each_append_is_written(tmp_path: Path) -> None:
    store, batches, sid = _store(tmp_path)
    store.append_soon(Sequencer(sid, "t").wrap(TextDelta(text="x")))
    assert batches == [([1], True)]


async def test_a_failed_write_is_counted_and_still_published(tmp_path: Path) -> None:
    store, batches, sid = _store(tmp_path)

    store.conn.execute("DROP TABLE events")  # every insert of the batch fails
    store.append_soon(Sequencer(sid, "t").wrap(TextDelta(text="x")))
    await asyncio.sleep(0)
    assert batches == [([1], False)]


async def test_manager_counts_failed_batches(manager: SessionManager) -> None:
    sid = await new_session(manager)
    seen: list[int] = []
    manager.hub.taps.append(lambda env: seen.append(env.seq))

    before = manager.history_write_failures
    manager.store.conn.execute("DROP TABLE events")  # every insert of the writer fails
    envs = [manager.emit(sid, TextDelta(text=str(i))) for i in range(3)]
    for _ in range(500):  # the writer thread's failure comes back to the loop (5 s at most)
        if manager.history_write_failures > before:
            break
        await asyncio.sleep(0.01)
    assert manager.history_write_failures == before + 3
    assert seen[-3:] == [e.seq for e in envs]
