"""Queue behaviour through the manager and the scripted adapter."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from corral.errors import QueueError, QueueFullError, SessionError
from corral.events import TextComplete, WarningEvent
from corral.sessions import PromptRecord, PromptState, SessionManager, SessionState
from corral.testing.scripted_adapter import ScriptedAdapter

from .conftest import is_type, new_session, prompt_state, resolver_for, wait_for


def replies(mgr: SessionManager, sid: str) -> list[str]:
    return [e.event.text for e in mgr.events(sid) if isinstance(e.event, TextComplete)]


async def test_prompts_queue_while_busy_and_go_in_order(manager: SessionManager) -> None:
    sid = await new_session(manager)
    hang = manager.send(sid, "[hang] first")
    await wait_for(manager, sid, prompt_state("delivered", hang.id))
    later = [manager.send(sid, f"p{i}") for i in range(3)]
    assert all(manager.queue.get(p.id).state == PromptState.QUEUED for p in later)
    assert (await manager.status(sid)).busy
    await manager.stop_turn(sid)
    await wait_for(manager, sid, is_type("turn.completed"), count=4)
    assert replies(manager, sid) == ["echo: p0", "echo: p1", "echo: p2"]
    assert [manager.queue.get(p.id).state for p in later] == [PromptState.DELIVERED] * 3


async def test_edit_and_cancel_while_waiting(manager: SessionManager) -> None:
    sid = await new_session(manager)
    hang = manager.send(sid, "[hang]")
    await wait_for(manager, sid, prompt_state("delivered", hang.id))
    a = manager.send(sid, "a")
    b = manager.send(sid, "b")
    c = manager.send(sid, "c")
    edited = manager.edit_prompt(a.id, "a2", expected_version=1)
    assert (edited.id, edited.version) == (a.id, 2)
    manager.cancel_prompt(b.id)
    await manager.stop_turn(sid)
    await wait_for(manager, sid, prompt_state("delivered", c.id))
    await wait_for(manager, sid, is_type("turn.completed"), count=3)
    assert replies(manager, sid) == ["echo: a2", "echo: c"]
    assert manager.queue.get(b.id).state == PromptState.CANCELED
    with pytest.raises(QueueError):
        manager.edit_prompt(c.id, "too late")
    # canceled prompts remain visible in the transcript
    assert await wait_for(manager, sid, prompt_state("canceled", b.id))


async def test_failed_send_is_retried_only_explicitly(manager: SessionManager) -> None:
    sid = await new_session(manager)
    bad = manager.send(sid, "[fail-send] x")
    good = manager.send(sid, "after")
    await wait_for(manager, sid, prompt_state("failed", bad.id))
    await wait_for(manager, sid, prompt_state("delivered", good.id))
    failed = manager.queue.get(bad.id)
    assert failed.state == PromptState.FAILED
    assert failed.error is not None
    assert "scripted send failure" in failed.error
    with pytest.raises(QueueError):
        manager.edit_prompt(bad.id, "y")
    retried = manager.retry_prompt(bad.id)
    assert retried.state == PromptState.QUEUED
    await wait_for(manager, sid, prompt_state("failed", bad.id), count=2)
    assert manager.queue.get(bad.id).attempts == 2


async def test_bounded_queue_raises_queue_full(db_path: Path) -> None:
    cls = ScriptedAdapter.configured()
    async with SessionManager(db_path, resolver=resolver_for(cls), queue_limit=3) as mgr:
        sid = await new_session(mgr)
        hang = mgr.send(sid, "[hang]")
        await wait_for(mgr, sid, prompt_state("delivered", hang.id))
        for i in range(3):
            mgr.send(sid, f"q{i}")
        with pytest.raises(QueueFullError):
            mgr.send(sid, "overflow")
        assert mgr.queue.counts(sid)[PromptState.QUEUED] == 3


async def test_history_write_failure_after_acceptance_does_not_resend(
    manager: SessionManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = await new_session(manager)
    adapter = manager._runners[sid].adapter
    assert isinstance(adapter, ScriptedAdapter)
    real = manager.queue.mark_delivered_soon
    calls = {"n": 0}

    def failing_once(prompt_id: str) -> asyncio.Future[PromptRecord]:
        calls["n"] += 1
        if calls["n"] == 1:  # the group commit that held the ack failed
            failed: asyncio.Future[PromptRecord] = asyncio.get_running_loop().create_future()
            failed.set_exception(sqlite3.OperationalError("disk I/O error"))
            return failed
        return real(prompt_id)

    monkeypatch.setattr(manager.queue, "mark_delivered_soon", failing_once)
    p = manager.send(sid, "once")
    warning = await wait_for(manager, sid, is_type("warning"))
    assert isinstance(warning[0].event, WarningEvent)
    assert warning[0].event.code == "history_write_failed"
    # the bookkeeping is retried when the turn completes; the prompt is never sent again
    await wait_for(manager, sid, prompt_state("delivered", p.id))
    nxt = manager.send(sid, "next")
    await wait_for(manager, sid, prompt_state("delivered", nxt.id))
    assert adapter.received == ["once", "next"]


async def test_history_write_failure_then_crash_is_indeterminate(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cls = ScriptedAdapter.configured()
    async with SessionManager(db_path, resolver=resolver_for(cls)) as mgr:
        sid = await new_session(mgr)

        def always_fail(prompt_id: str) -> asyncio.Future[PromptRecord]:
            raise sqlite3.OperationalError("disk full")

        monkeypatch.setattr(mgr.queue, "mark_delivered_soon", always_fail)
        p = mgr.send(sid, "accepted")
        await wait_for(mgr, sid, is_type("turn.completed"))
        adapter = mgr._runners[sid].adapter
        assert isinstance(adapter, ScriptedAdapter)
        assert adapter.received == ["accepted"]
    async with SessionManager(db_path, resolver=resolver_for(cls)) as mgr2:
        assert mgr2.queue.get(p.id).state == PromptState.INDETERMINATE
        # and it is visibly marked in the transcript, not shown as delivered
        marked = [e for e in mgr2.events(sid) if prompt_state("indeterminate", p.id)(e)]
        assert len(marked) == 1
        await mgr2.resume(sid)
        later = mgr2.send(sid, "later")
        await wait_for(mgr2, sid, prompt_state("delivered", later.id))
        adapter2 = mgr2._runners[sid].adapter
        assert isinstance(adapter2, ScriptedAdapter)
        assert adapter2.received == ["later"]


async def test_ended_session_refuses_prompts(manager: SessionManager) -> None:
    sid = await new_session(manager)
    await manager.kill(sid)
    assert manager.get_session(sid).state == SessionState.ENDED
    with pytest.raises(SessionError):
        manager.send(sid, "nope")


async def test_kill_during_hand_over_leaves_prompt_indeterminate(db_path: Path) -> None:
    slow = ScriptedAdapter.configured(send_delay=60.0)  # the hand-over never finishes on its own
    async with SessionManager(db_path, resolver=resolver_for(slow)) as mgr:
        sid = await new_session(mgr)
        p = mgr.send(sid, "in flight")
        after = mgr.send(sid, "behind it")
        await wait_for(mgr, sid, prompt_state("sending", p.id))
        await mgr.kill(sid)
        assert mgr.queue.get(p.id).state == PromptState.INDETERMINATE
        assert mgr.queue.get(after.id).state == PromptState.CANCELED
        with pytest.raises(QueueError):
            mgr.cancel_prompt(p.id)  # indeterminate stays visible; only retry can move it
