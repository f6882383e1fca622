"""Approvals, questions, stop, kill vs failure, resume, restart, repair, status, view state."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from concurrent.futures import Future
from pathlib import Path

import pytest

from corral import _db
from corral.adapters.base import Attachment
from corral.errors import AdapterNotFoundError, SessionError
from corral.events import (
    ApprovalDecision,
    ApprovalRequested,
    EndReason,
    QuestionAsked,
    SessionEnded,
    StopReason,
    TextComplete,
    ToolCallFailed,
    TurnCompleted,
)
from corral.sessions import (
    PromptQueue,
    PromptRecord,
    PromptState,
    SessionManager,
    SessionRecord,
    SessionSpec,
    SessionState,
    SessionStore,
    ViewState,
)
from corral.testing.scripted_adapter import ScriptedAdapter

from .conftest import WAIT, is_type, new_session, prompt_state, resolver_for, wait_for


async def test_approval_allow_and_deny(manager: SessionManager) -> None:
    sid = await new_session(manager)
    manager.send(sid, "[approve] run it")
    req = (await wait_for(manager, sid, is_type("approval.requested")))[0]
    assert isinstance(req.event, ApprovalRequested)
    assert (await manager.status(sid)).pending_approvals == (req.event.request_id,)
    await manager.respond_approval(sid, req.event.request_id, ApprovalDecision.ALLOW)
    done = await wait_for(manager, sid, is_type("turn.completed"))
    assert isinstance(done[0].event, TurnCompleted)
    assert (await manager.status(sid)).pending_approvals == ()
    manager.send(sid, "[approve] again")
    req2 = (await wait_for(manager, sid, is_type("approval.requested"), after=done[0].seq))[0]
    assert isinstance(req2.event, ApprovalRequested)
    await manager.respond_approval(sid, req2.event.request_id, ApprovalDecision.DENY)
    failed = await wait_for(manager, sid, is_type("tool.failed"))
    assert isinstance(failed[0].event, ToolCallFailed)
    assert failed[0].event.denied


async def test_question_answered(manager: SessionManager) -> None:
    sid = await new_session(manager)
    manager.send(sid, "[ask]")
    asked = (await wait_for(manager, sid, is_type("question.asked")))[0].event
    assert isinstance(asked, QuestionAsked)
    await manager.answer_question(sid, asked.request_id, {asked.questions[0].question: "blue"})
    await wait_for(manager, sid, is_type("turn.completed"))
    texts = [e.event.text for e in manager.events(sid) if isinstance(e.event, TextComplete)]
    assert texts == ["you chose blue"]


async def test_stop_cancels_turn_and_keeps_session(manager: SessionManager) -> None:
    sid = await new_session(manager)
    p = manager.send(sid, "[hang]")
    await wait_for(manager, sid, prompt_state("delivered", p.id))
    await manager.stop_turn(sid)
    done = (await wait_for(manager, sid, is_type("turn.completed")))[0].event
    assert isinstance(done, TurnCompleted)
    assert done.stop_reason == StopReason.CANCELLED
    assert manager.is_running(sid)
    assert manager.get_session(sid).state == SessionState.IDLE
    manager.send(sid, "still here")
    await wait_for(manager, sid, is_type("turn.completed"), count=2)


class HeldClaims:
    """Stands between the runner and the queue's claims: each claim runs on the writer at once,
    but its answer reaches the runner only when the test lets it through."""

    def __init__(self, queue: PromptQueue) -> None:
        self._claim = queue.claim_next_soon
        self.held: list[tuple[Future[PromptRecord | None], Future[PromptRecord | None]]] = []

    def __call__(self, session_id: str) -> Future[PromptRecord | None]:
        answer: Future[PromptRecord | None] = Future()
        self.held.append((self._claim(session_id), answer))
        return answer

    async def next(self) -> tuple[PromptRecord | None, Future[PromptRecord | None]]:
        """The next claim the runner makes, committed, with the answer still held."""
        for _ in range(int(WAIT / 0.01)):
            if self.held:
                committed, answer = self.held.pop(0)
                return committed.result(timeout=WAIT), answer
            await asyncio.sleep(0.01)
        raise AssertionError("the runner made no claim")


@pytest.fixture
def claims(manager: SessionManager, monkeypatch: pytest.MonkeyPatch) -> HeldClaims:
    held = HeldClaims(manager.queue)
    monkeypatch.setattr(manager.queue, "claim_next_soon", held)
    return held


async def release_waiting(manager: SessionManager, sid: str) -> asyncio.Task[SessionRecord]:
    """Start handing ``sid`` off and show that it waits for the claim rather than reading the
    runner early."""
    release = asyncio.create_task(manager.release(sid, message="to the terminal"))
    await asyncio.sleep(0.1)
    assert not release.done()
    return release


async def test_release_refuses_while_a_committed_claim_has_not_reached_the_runner(
    manager: SessionManager, claims: HeldClaims
) -> None:
    sid = await new_session(manager)
    empty, answer = await claims.next()  # the runner's first look finds the queue empty
    assert empty is None
    answer.set_result(empty)
    prompt = manager.send(sid, "[hang] work")
    claimed, answer = await claims.next()
    assert claimed is not None and claimed.id == prompt.id
    assert manager.get_session(sid).state == SessionState.BUSY  # the claim's own write
    release = await release_waiting(manager, sid)
    answer.set_result(claimed)
    runner = manager._runners[sid]  # the loop has not resumed the runner yet
    assert runner.claimed_a_prompt and not runner.busy
    with pytest.raises(SessionError, match="in a turn"):
        await asyncio.wait_for(release, WAIT)
    await wait_for(manager, sid, prompt_state("delivered", prompt.id))
    assert manager.is_running(sid)


async def test_release_goes_ahead_when_the_claim_under_way_finds_nothing(
    manager: SessionManager, claims: HeldClaims
) -> None:
    sid = await new_session(manager)
    empty, answer = await claims.next()
    release = await release_waiting(manager, sid)
    answer.set_result(empty)
    record = await asyncio.wait_for(release, WAIT)
    assert record.state == SessionState.DETACHED
    assert not manager.is_running(sid)


async def test_kill_is_distinct_from_failure(manager: SessionManager) -> None:
    killed = await new_session(manager)
    hang = manager.send(killed, "[hang]")
    await wait_for(manager, killed, prompt_state("delivered", hang.id))
    queued = manager.send(killed, "never")
    record = await manager.kill(killed)
    assert record.state == SessionState.ENDED
    ends = [e.event for e in manager.events(killed) if isinstance(e.event, SessionEnded)]
    assert [e.reason for e in ends] == [EndReason.KILLED]
    assert manager.queue.get(queued.id).state == PromptState.CANCELED
    with pytest.raises(SessionError):
        await manager.resume(killed)

    crashed = await new_session(manager)
    manager.send(crashed, "[crash]")
    end = (await wait_for(manager, crashed, is_type("session.ended")))[0].event
    assert isinstance(end, SessionEnded)
    assert end.reason == EndReason.FAILED
    await manager.wait_ended(crashed)
    assert manager.get_session(crashed).state == SessionState.FAILED
    assert manager.get_session(crashed).last_error


async def test_resume_after_failure_passes_agent_session_id(manager: SessionManager) -> None:
    sid = await new_session(manager)
    agent_sid = manager.get_session(sid).agent_session_id
    manager.send(sid, "[crash]")
    await wait_for(manager, sid, is_type("session.ended"))
    await manager.wait_ended(sid)
    waiting = manager.send(sid, "carried")  # queued while the session is down
    record = await manager.resume(sid)
    assert record.state in (SessionState.IDLE, SessionState.BUSY)
    adapter = manager._runners[sid].adapter
    assert isinstance(adapter, ScriptedAdapter)
    assert adapter.resume_session_id == agent_sid
    await wait_for(manager, sid, prompt_state("delivered", waiting.id))


async def test_restart_lists_sessions_and_resume_carries_queue_in_order(db_path: Path) -> None:
    cls = ScriptedAdapter.configured()
    async with SessionManager(db_path, resolver=resolver_for(cls)) as mgr:
        sid = await new_session(mgr, cwd="/tmp", model="m2")
        first = mgr.send(sid, "[hang] long")
        await wait_for(mgr, sid, prompt_state("delivered", first.id))
        queued = [mgr.send(sid, f"q{i}") for i in range(3)]
        transcript_len = len(mgr.events(sid))
    async with SessionManager(db_path, resolver=resolver_for(cls)) as mgr2:
        [record] = mgr2.list_sessions()
        assert record.id == sid
        assert record.state == SessionState.DISCONNECTED
        assert record.model == "m2" and record.cwd == "/tmp"
        assert len(mgr2.events(sid)) > transcript_len  # transcript kept, restart recorded
        assert [p.state for p in mgr2.prompts(sid)][1:] == [PromptState.QUEUED] * 3
        await mgr2.resume(sid)
        await wait_for(mgr2, sid, prompt_state("delivered", queued[-1].id))
        adapter = mgr2._runners[sid].adapter
        assert isinstance(adapter, ScriptedAdapter)
        assert adapter.received == ["q0", "q1", "q2"]


async def test_start_failure_and_unknown_adapter(db_path: Path) -> None:
    cls = ScriptedAdapter.configured(fail_start=True)
    async with SessionManager(db_path, resolver=resolver_for(cls)) as mgr:
        with pytest.raises(SessionError):
            await mgr.create_session(SessionSpec(adapter_id="scripted"))
        [record] = mgr.list_sessions()
        assert record.state == SessionState.FAILED
        with pytest.raises(AdapterNotFoundError):
            await mgr.create_session(SessionSpec(adapter_id="nope"))


async def test_status_repair_and_observers(manager: SessionManager) -> None:
    sid = await new_session(manager)
    status = await manager.status(sid)
    assert status.running
    assert status.adapter_status == {"busy": False, "received": 0, "queued_turns": 0}
    result = await manager.repair(sid)
    assert result["ok"] is False  # the scripted adapter has no binary to detect

    async def observe() -> list[int]:
        out = []
        async for env in manager.subscribe(sid):
            out.append(env.seq)
            if env.event.__struct_config__.tag == "turn.completed":
                return out
        return out

    observers = [asyncio.create_task(observe()) for _ in range(3)]
    await asyncio.sleep(0)  # let the observers subscribe before the prompt goes out
    manager.send(sid, "hi")
    seen = await asyncio.wait_for(asyncio.gather(*observers), WAIT)
    assert seen[0] == seen[1] == seen[2]
    assert seen[0] == sorted(set(seen[0]))


async def test_drafts_and_view_state_survive_restart(db_path: Path) -> None:
    cls = ScriptedAdapter.configured()
    image = Attachment(data=b"img", media_type="image/png", name="x.png")
    async with SessionManager(db_path, resolver=resolver_for(cls)) as mgr:
        sid = await new_session(mgr)
        hang = mgr.send(sid, "[hang]")
        await wait_for(mgr, sid, prompt_state("delivered", hang.id))
        queued = mgr.send(sid, "queued one")
        mgr.save_view(
            sid,
            ViewState(
                draft_text="new message",
                draft_attachments=(image,),
                edit_target=queued.id,
                scroll_position=120.5,
                follow=False,
            ),
        )
        mgr.edit_prompt(queued.id, "queued one, edited")
    async with SessionManager(db_path, resolver=resolver_for(cls)) as mgr2:
        view = mgr2.view(sid)
        assert view.draft_text == "new message"  # editing a queued prompt kept the draft
        assert view.draft_attachments == (image,)
        assert view.edit_target == queued.id
        assert view.scroll_position == 120.5
        assert view.follow is False
        assert mgr2.queue.get(queued.id).text == "queued one, edited"


@pytest.fixture
def dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(proc.stdout)


async def test_recovery_leaves_sessions_of_other_live_processes_alone(
    db_path: Path, dead_pid: int
) -> None:
    conn = _db.connect(db_path)
    store, queue = SessionStore(conn), PromptQueue(conn)
    owners = {"alive": os.getppid(), "dead": dead_pid}
    ids = {}
    for name, pid in owners.items():
        sid = store.create(SessionSpec(adapter_id="scripted")).id
        store.update(sid, state=SessionState.BUSY, owner_pid=pid)
        queue.enqueue(sid, f"{name} prompt")
        assert queue.claim_next(sid) is not None
        ids[name] = sid
    conn.close()
    async with SessionManager(db_path, resolver=resolver_for(ScriptedAdapter.configured())) as mgr:
        assert mgr.get_session(ids["alive"]).state == SessionState.BUSY
        assert [p.state for p in mgr.prompts(ids["alive"])] == [PromptState.SENDING]
        assert mgr.get_session(ids["dead"]).state == SessionState.DISCONNECTED
        assert [p.state for p in mgr.prompts(ids["dead"])] == [PromptState.INDETERMINATE]
        # one writer per session: the other process's session is read-only here
        with pytest.raises(SessionError):
            await mgr.resume(ids["alive"])
        with pytest.raises(SessionError, match="run by corral process"):
            mgr.send(ids["alive"], "from a second process")
        with pytest.raises(SessionError, match="run by corral process"):
            await mgr.kill(ids["alive"])
        assert len(mgr.events(ids["alive"])) == 0
        mgr.send(ids["dead"], "fine: its process is gone")


async def test_a_turn_records_busy_once_in_its_claim_and_idle_at_its_end(
    manager: SessionManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The claim's transaction records the session busy; the runner writes no second busy of its
    own (one write fewer a turn, docs/performance.md part 3 round 12), and the end writes idle."""
    sid = await new_session(manager)
    written: list[SessionState] = []
    update_soon = manager.store.update_soon

    def recording(session_id: str, **fields: object) -> object:
        if session_id == sid and "state" in fields:
            written.append(fields["state"])  # type: ignore[arg-type]
        return update_soon(session_id, **fields)  # type: ignore[arg-type]

    monkeypatch.setattr(manager.store, "update_soon", recording)
    prompt = manager.send(sid, "[hang] work")
    await wait_for(manager, sid, prompt_state("delivered", prompt.id))
    assert manager.get_session(sid).state == SessionState.BUSY  # from the claim alone
    assert written == []
    await manager.stop_turn(sid)
    await wait_for(manager, sid, is_type("turn.completed"))
    assert written == [SessionState.IDLE]
    assert manager.get_session(sid).state == SessionState.IDLE
