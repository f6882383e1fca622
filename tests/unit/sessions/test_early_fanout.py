"""Early fan-out (decision 046): observers get an envelope before its transcript commit, only
within a committed seq reservation, always in order; no seq an observer saw is reused after a
crash; a clean close leaves no jump in the numbering."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import Future
from pathlib import Path

from corral.events import Envelope, Sequencer, StatusChanged, TextDelta
from corral.sessions import SessionManager
from corral.sessions._fanout import RESERVE_AHEAD, RESERVE_BLOCK, FanOut

from .conftest import WAIT, new_session, resolver_for

ROOT = Path(__file__).resolve().parents[3]


def _stored_seqs(db: Path, sid: str) -> list[int]:
    """The committed transcript, read on a connection of its own (no flush, no wait)."""
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT seq FROM events WHERE session_id = ? ORDER BY seq", (sid,))
        return [r[0] for r in rows]
    finally:
        conn.close()


def _reservations(db: Path) -> dict[str, int]:
    conn = sqlite3.connect(db)
    try:
        return dict(conn.execute("SELECT session_id, reserved FROM event_seq_reservations"))
    finally:
        conn.close()


async def _reserved(manager: SessionManager, sid: str) -> None:
    """Until the session's first seq reservation is committed and back on the loop: the store's
    drain waits for every write submitted (the reservation too), whose answer is then already
    queued on the loop; a few loop iterations deliver it."""
    await manager.store.drain()
    lane = manager.fanout._lanes[sid]
    for _ in range(10):
        await asyncio.sleep(0)
    assert lane.reserved > lane.last


class _Gate:
    """Holds the manager's writer thread in an operation until opened."""

    def __init__(self, manager: SessionManager) -> None:
        self.inside = threading.Event()
        self.opened = threading.Event()
        self.done = manager.submit_write(self._hold)

    def _hold(self, _conn: sqlite3.Connection) -> None:
        self.inside.set()
        assert self.opened.wait(WAIT)

    def open(self) -> None:
        self.opened.set()


async def test_inside_the_reservation_an_envelope_is_published_before_its_commit(
    db_path: Path, adapter_cls: type
) -> None:
    async with SessionManager(db_path, resolver=resolver_for(adapter_cls)) as manager:
        sid = await new_session(manager)
        await _reserved(manager, sid)
        assert _reservations(db_path)[sid] >= RESERVE_BLOCK
        seen: list[int] = []
        manager.hub.taps.append(lambda env: seen.append(env.seq) if env.session_id == sid else None)
        gate = _Gate(manager)
        assert await asyncio.to_thread(gate.inside.wait, WAIT)
        envs = [manager.emit(sid, TextDelta(text=str(i))) for i in range(5)]
        assert seen == [e.seq for e in envs]  # at once, while the writer is held
        assert not set(seen) & set(_stored_seqs(db_path, sid))  # and not committed yet
        gate.open()
        await manager.store.drain()
        assert _stored_seqs(db_path, sid)[-5:] == seen  # then stored, as before


def _fanout() -> tuple[FanOut, list[int], list[Future[None]], list[int]]:
    published: list[int] = []
    asked: list[Future[None]] = []
    asked_at: list[int] = []  # the last seq accepted when each reservation was asked for

    def reserve(_sid: str, _upto: int) -> Future[None]:
        future: Future[None] = Future()
        asked.append(future)
        asked_at.append(len(accepted))
        return future

    accepted: list[Envelope] = []

    def publish(env: Envelope, data: bytes) -> None:
        assert data == b"json of %d" % env.seq  # published with the JSON it was accepted with
        published.append(env.seq)

    fan = FanOut(publish, reserve)
    fan.start("s", 0)
    accept = fan.accept

    def counted(env: Envelope, data: bytes | None = None) -> None:
        accepted.append(env)
        accept(env, b"json of %d" % env.seq if data is None else data)

    fan.accept = counted  # type: ignore[method-assign]
    return fan, published, asked, asked_at


async def test_beyond_the_reservation_envelopes_wait_for_a_commit_in_order() -> None:
    fan, published, asked, _ = _fanout()
    seq = Sequencer("s", "t")
    first = [seq.wrap(TextDelta(text=str(i))) for i in range(3)]
    for env in first:
        fan.accept(env)
    assert published == [] and len(asked) == 1  # nothing reserved yet: held, one reservation
    fan.stored(first[:1])  # the transcript batch holding seq 1 committed first
    assert published == [1]
    asked[0].set_result(None)  # then the reservation (up to 1 + RESERVE_BLOCK)
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert published == [1, 2, 3]
    fan.accept(seq.wrap(TextDelta(text="now")))
    assert published == [1, 2, 3, 4]  # inside the reservation: at once
    assert len(asked) == 1


async def test_a_new_reservation_is_asked_for_ahead_and_order_holds_while_it_commits() -> None:
    fan, published, asked, asked_at = _fanout()
    seq = Sequencer("s", "t")
    fan.accept(seq.wrap(TextDelta(text="a")))
    asked[0].set_result(None)
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    reserved = 1 + RESERVE_BLOCK
    envs = [seq.wrap(TextDelta(text=str(i))) for i in range(reserved + 10 - 1)]
    for env in envs:
        fan.accept(env)
    # asked once more, when the seq came within RESERVE_AHEAD of the first reservation
    assert len(asked) == 2 and asked_at[1] == reserved - RESERVE_AHEAD + 1
    assert published == list(range(1, reserved + 1))  # up to the reservation, at once
    fan.stored([e for e in envs if e.seq in (reserved, reserved + 1)])  # a batch committed:
    assert published[-1] == reserved + 1  # seq reserved + 1 may go, not beyond
    asked[1].set_result(None)
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert published == list(range(1, reserved + 10 + 1))


async def test_a_failed_reservation_leaves_envelopes_to_their_commit() -> None:
    fan, published, asked, _ = _fanout()
    seq = Sequencer("s", "t")
    envs = [seq.wrap(TextDelta(text=str(i))) for i in range(2)]
    for env in envs:
        fan.accept(env)
    asked[0].set_exception(sqlite3.OperationalError("disk I/O error"))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert published == []
    fan.stored(envs)
    assert published == [1, 2]


async def test_a_subscriber_joining_while_envelopes_are_uncommitted_gets_each_once(
    db_path: Path, adapter_cls: type
) -> None:
    async with SessionManager(db_path, resolver=resolver_for(adapter_cls)) as manager:
        sid = await new_session(manager)
        await _reserved(manager, sid)
        gate = _Gate(manager)
        assert await asyncio.to_thread(gate.inside.wait, WAIT)
        early = [manager.emit(sid, TextDelta(text=str(i))) for i in range(4)]  # published, held
        # The backlog read waits for the writer; open it from a thread meanwhile.
        threading.Timer(0.1, gate.open).start()
        feed = manager.follow_frames(sid, lambda e, _: b"%d;" % e.seq, after=0)
        got: list[int] = []
        while not got or got[-1] < early[-1].seq:
            got += [int(f.rstrip(b";")) for f in await asyncio.wait_for(anext(feed), WAIT)]
        late = [manager.emit(sid, TextDelta(text="late")) for _ in range(3)]
        while got[-1] < late[-1].seq:
            got += [int(f.rstrip(b";")) for f in await asyncio.wait_for(anext(feed), WAIT)]
        await feed.aclose()  # type: ignore[attr-defined]
        assert got == list(range(1, late[-1].seq + 1))  # every seq once, in order


async def test_a_clean_close_drops_the_reservation_and_numbering_goes_on(
    db_path: Path, adapter_cls: type
) -> None:
    async with SessionManager(db_path, resolver=resolver_for(adapter_cls)) as manager:
        sid = await new_session(manager)
        last = manager.emit(sid, TextDelta(text="x")).seq
    assert _reservations(db_path) == {}
    async with SessionManager(db_path, resolver=resolver_for(adapter_cls)) as manager:
        nxt = manager.emit(sid, TextDelta(text="y"))
        assert nxt.seq > last
        stored = manager.events(sid)
    assert [e.seq for e in stored] == list(range(1, nxt.seq + 1))  # no jump after a clean close


_CHILD = textwrap.dedent(
    """
    import asyncio, sys, threading
    from corral.events import TextDelta
    from corral.sessions import SessionManager

    async def main(db, sid):
        manager = SessionManager(db)
        await manager.__aenter__()
        manager.emit(sid, TextDelta(text="first"))
        await manager.store.drain()
        for _ in range(1000):  # until the reservation is back on the loop (10 s at most)
            await asyncio.sleep(0.01)
            if manager.fanout._lanes[sid].reserved > 1:
                break
        held = threading.Event()
        manager.submit_write(lambda conn: held.wait())  # the writer never commits again
        manager.hub.taps.append(lambda env: print(env.seq, flush=True))
        for i in range(10):
            manager.emit(sid, TextDelta(text=str(i)))
        print("ready", flush=True)
        await asyncio.Event().wait()

    asyncio.run(main(sys.argv[1], sys.argv[2]))
    """
)


def _crash_child(db_path: Path, sid: str) -> list[int]:
    """Run the child until it has published 10 uncommitted envelopes, SIGKILL it; their seqs."""
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(db_path), sid],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    seen: list[int] = []
    try:
        assert child.stdout is not None
        for line in child.stdout:
            if line.strip() == "ready":
                break
            seen.append(int(line))
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(WAIT)
        if child.stdout is not None:
            child.stdout.close()
    return seen


async def test_after_a_crash_no_seq_an_observer_saw_is_reused(
    db_path: Path, adapter_cls: type
) -> None:
    async with SessionManager(db_path, resolver=resolver_for(adapter_cls)) as manager:
        sid = await new_session(manager)
        await manager.kill(sid)
    seen = await asyncio.to_thread(_crash_child, db_path, sid)
    assert len(seen) == 10  # published by the child, never committed
    stored = _stored_seqs(db_path, sid)
    assert not set(seen) & set(stored)
    async with SessionManager(db_path, resolver=resolver_for(adapter_cls)) as manager:
        after = manager.emit(sid, StatusChanged(status="checked"))
        assert after.seq > max(seen)  # numbered past everything an observer may have seen
        # an observer resuming from the last seq it saw gets what comes after it, exactly
        feed = manager.follow_frames(sid, lambda e, _: b"%d;" % e.seq, after=max(seen))
        resumed: list[Envelope] = []
        batch = await asyncio.wait_for(anext(feed), WAIT)
        resumed += [e for e in manager.events(sid) if e.seq > max(seen)]
        await feed.aclose()  # type: ignore[attr-defined]
        assert [int(f.rstrip(b";")) for f in batch] == [e.seq for e in resumed]
        assert after.seq in [e.seq for e in resumed]
