"""Session ownership that PID reuse cannot fool: the owner's OS lock decides, and ``take_over``
is the explicit way out when there is no lock to ask."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from corral import _db
from corral.errors import SessionError
from corral.events import StatusChanged
from corral.sessions import PromptState, SessionManager, SessionSpec, SessionState
from corral.sessions._ownership import LockState, OwnerLocks
from corral.sessions._queue import PromptQueue
from corral.sessions._store import SessionStore
from corral.testing.scripted_adapter import ScriptedAdapter

from .conftest import resolver_for

pytestmark = pytest.mark.timeout(60)


def busy_session_left_by(db_path: Path, owner_pid: int) -> tuple[str, str]:
    """A session recorded busy by ``owner_pid`` with one prompt left ``sending``."""
    conn = _db.connect(db_path)
    store, queue = SessionStore(conn), PromptQueue(conn)
    sid = store.create(SessionSpec(adapter_id="scripted")).id
    store.update(sid, state=SessionState.BUSY, owner_pid=owner_pid)
    prompt = queue.enqueue(sid, "left sending by a crashed corral")
    assert queue.claim_next(sid) is not None
    conn.close()
    return sid, prompt.id


def lock_holder(db_path: Path, sid: str) -> subprocess.Popen[str]:
    """Another corral process holding the session's lock (until killed)."""
    code = f"""
        import sys, time
        from corral.sessions._ownership import OwnerLocks
        OwnerLocks({str(db_path)!r}).acquire({sid!r})
        print("held", flush=True)
        time.sleep(60)
    """
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def manager(db_path: Path) -> SessionManager:
    return SessionManager(db_path, resolver=resolver_for(ScriptedAdapter.configured()))


async def test_a_crashed_owner_whose_pid_was_reused_is_recovered(db_path: Path) -> None:
    # The pid now belongs to an unrelated live process (our parent); the lock says the owner died.
    sid, prompt_id = busy_session_left_by(db_path, owner_pid=os.getppid())
    holder = lock_holder(db_path, sid)
    holder.kill()  # corral crashed: the kernel drops its lock
    holder.wait(10)
    assert holder.stdout is not None
    holder.stdout.close()
    assert OwnerLocks(db_path).state(sid) is LockState.FREE
    async with manager(db_path) as mgr:
        assert mgr.get_session(sid).state == SessionState.DISCONNECTED
        assert mgr.queue.get(prompt_id).state == PromptState.INDETERMINATE
        assert (await mgr.resume(sid)).state == SessionState.IDLE  # usable again
        mgr.retry_prompt(prompt_id)  # an explicit choice, accepted now
        assert (await mgr.kill(sid)).state == SessionState.ENDED


async def test_a_live_lock_holder_wins_over_a_dead_looking_pid(db_path: Path) -> None:
    sid, prompt_id = busy_session_left_by(db_path, owner_pid=2**22 + 4321)  # no such pid
    holder = lock_holder(db_path, sid)
    try:
        async with manager(db_path) as mgr:
            assert mgr.get_session(sid).state == SessionState.BUSY
            assert mgr.queue.get(prompt_id).state == PromptState.SENDING
            with pytest.raises(SessionError, match="run by"):
                mgr.send(sid, "from a second process")
            with pytest.raises(SessionError, match="holds the lock"):
                await mgr.take_over(sid)
    finally:
        holder.kill()
        holder.wait(10)
        assert holder.stdout is not None
        holder.stdout.close()


async def test_take_over_frees_a_session_with_no_lock_and_a_reused_pid(db_path: Path) -> None:
    # Recorded by a corral without ownership locks; its pid is alive but someone else's.
    sid, prompt_id = busy_session_left_by(db_path, owner_pid=os.getppid())
    async with manager(db_path) as mgr:
        assert mgr.get_session(sid).state == SessionState.BUSY  # the pid alone looks alive
        with pytest.raises(SessionError):
            await mgr.resume(sid)
        record = await mgr.take_over(sid)
        assert record.state == SessionState.DISCONNECTED
        assert mgr.queue.get(prompt_id).state == PromptState.INDETERMINATE
        mgr.retry_prompt(prompt_id)
        assert (await mgr.resume(sid)).state == SessionState.IDLE
        statuses = [e.event for e in mgr.events(sid) if isinstance(e.event, StatusChanged)]
        assert any("taken over" in (s.message or "") for s in statuses)


async def test_a_running_session_holds_its_lock_and_releases_it_at_the_end(db_path: Path) -> None:
    async with manager(db_path) as mgr:
        sid = (await mgr.create_session(SessionSpec(adapter_id="scripted"))).id
        assert mgr.locks.state(sid) is LockState.OURS
        assert OwnerLocks(db_path).state(sid) is LockState.HELD  # as another process sees it
        with pytest.raises(SessionError):
            await mgr.take_over(sid)
        await mgr.kill(sid)
        assert OwnerLocks(db_path).state(sid) is LockState.FREE
