"""A resume that never lies: each wrong vendor session ends in its documented refusal.

On Claude Code's recorded store (``corral record claude store``) the refusals come before any
process starts; with the stand-in vendor a right resume is shown to continue the right file.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any, ClassVar

import pytest

from corral.adapters.claude import ClaudeAdapter
from corral.errors import ResumeRefused
from corral.events import StatusChanged
from corral.sessions import AdapterResolver, PromptState, SessionManager, SessionSpec, SessionState
from corral.sessions._resume_check import fresh_session

from ._recorded import Recorded, recorded
from ._vendor import texts, vendor_adapter, write_session
from .test_flow import until


def _claude_with(env: dict[str, str]) -> type[ClaudeAdapter]:
    class StoredClaude(ClaudeAdapter):
        store_env: ClassVar[dict[str, str]] = env

    return StoredClaude


@pytest.fixture
def claude_store(tmp_path: Path) -> Recorded:
    return recorded("claude", tmp_path)


def _entry(rec: Recorded) -> Any:
    entries = list(_claude_with(rec.env).scan_external_sessions(env=rec.env))
    assert len(entries) == 1
    return entries[0]


async def _disconnected(mgr: SessionManager, *, agent_sid: str, cwd: str, said: str) -> str:
    """A session corral ran before (it delivered ``said``) and lost when it stopped."""
    record = mgr.store.create(SessionSpec(adapter_id="claude-code", cwd=cwd))
    mgr.store.update(record.id, agent_session_id=agent_sid, state=SessionState.DISCONNECTED)
    mgr.emit(record.id, StatusChanged(status="prompt.delivered", raw={"text": said}))
    return record.id


@pytest.fixture
async def claude_manager(tmp_path: Path, claude_store: Recorded) -> Any:
    resolver = AdapterResolver(
        {"claude-code": _claude_with(claude_store.env)}, use_env=False, use_entry_points=False
    )
    async with SessionManager(tmp_path / "corral.db", resolver=resolver) as mgr:
        yield mgr


async def test_a_deleted_vendor_session_is_refused_with_the_offer(
    claude_manager: SessionManager, claude_store: Recorded
) -> None:
    entry = _entry(claude_store)
    said = claude_store.meta["prompts"][-1]
    sid = await _disconnected(claude_manager, agent_sid=entry.sid, cwd=entry.cwd, said=said)
    await asyncio.to_thread(Path(entry.path).unlink)
    with pytest.raises(ResumeRefused) as caught:
        await claude_manager.resume(sid)
    assert caught.value.code == "vendor_session_lost"
    assert entry.sid in str(caught.value)
    assert f"corral sessions resume {sid} --fresh" in caught.value.offer
    assert not claude_manager.is_running(sid)
    assert claude_manager.get_session(sid).state == SessionState.DISCONNECTED


async def test_a_session_id_from_another_directory_is_refused(
    claude_manager: SessionManager, claude_store: Recorded, tmp_path: Path
) -> None:
    entry = _entry(claude_store)
    other = tmp_path / "another-project"
    other.mkdir()
    said = claude_store.meta["prompts"][-1]
    sid = await _disconnected(claude_manager, agent_sid=entry.sid, cwd=str(other), said=said)
    with pytest.raises(ResumeRefused) as caught:
        await claude_manager.resume(sid)
    assert caught.value.code == "vendor_session_elsewhere"
    assert entry.cwd in str(caught.value)
    assert not claude_manager.is_running(sid)


async def test_a_vendor_session_without_the_last_turn_is_another_conversation(
    claude_manager: SessionManager, claude_store: Recorded
) -> None:
    entry = _entry(claude_store)
    sid = await _disconnected(
        claude_manager, agent_sid=entry.sid, cwd=entry.cwd, said="a prompt this file never saw"
    )
    with pytest.raises(ResumeRefused) as caught:
        await claude_manager.resume(sid)
    assert caught.value.code == "vendor_session_diverged"


async def test_the_recorded_session_itself_passes_the_check(
    claude_manager: SessionManager, claude_store: Recorded
) -> None:
    from corral.sessions._resume_check import check_resume

    entry = _entry(claude_store)
    said = claude_store.meta["prompts"][-1]
    sid = await _disconnected(claude_manager, agent_sid=entry.sid, cwd=entry.cwd, said=said)
    found = check_resume(
        _claude_with(claude_store.env),
        session_id=sid,
        agent_sid=entry.sid,
        cwd=entry.cwd,
        events=claude_manager.events(sid),
    )
    assert found is not None and found.sid == entry.sid


async def test_two_sessions_in_one_directory_resume_the_one_corral_ran(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    store = tmp_path / "store"
    mine = write_session(store, "v1", project, "mine: one")
    cls = vendor_adapter(store, set())
    resolver = AdapterResolver({"scripted": cls}, use_env=False, use_entry_points=False)
    async with SessionManager(tmp_path / "corral.db", resolver=resolver) as mgr:
        record = mgr.store.create(SessionSpec(adapter_id="scripted", cwd=str(project)))
        mgr.store.update(record.id, agent_session_id="v1", state=SessionState.DISCONNECTED)
        mgr.emit(record.id, StatusChanged(status="prompt.delivered", raw={"text": "mine: one"}))
        neighbour = write_session(store, "v2", project, "a neighbour's newer conversation")
        await mgr.resume(record.id)
        prompt = mgr.send(record.id, "mine: two")
        await until(lambda: mgr.queue.get(prompt.id).state == PromptState.DELIVERED, "delivery")
        assert texts(mine) == ["mine: one", "mine: two"]
        assert texts(neighbour) == ["a neighbour's newer conversation"]

        # had corral recorded the neighbour's id, the resume would refuse, not adopt it
        await mgr.kill(record.id)
        wrong = mgr.store.create(SessionSpec(adapter_id="scripted", cwd=str(project)))
        mgr.store.update(wrong.id, agent_session_id="v2", state=SessionState.DISCONNECTED)
        mgr.emit(wrong.id, StatusChanged(status="prompt.delivered", raw={"text": "mine: two"}))
        with pytest.raises(ResumeRefused) as caught:
            await mgr.resume(wrong.id)
        assert caught.value.code == "vendor_session_diverged"


async def test_the_offer_is_a_fresh_session_carrying_a_summary(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    store = tmp_path / "store"
    path = write_session(store, "v1", project, "plan the release")
    cls = vendor_adapter(store, set())
    resolver = AdapterResolver({"scripted": cls}, use_env=False, use_entry_points=False)
    async with SessionManager(tmp_path / "corral.db", resolver=resolver) as mgr:
        record = mgr.store.create(SessionSpec(adapter_id="scripted", cwd=str(project)))
        mgr.store.update(record.id, agent_session_id="v1", state=SessionState.DISCONNECTED)
        mgr.emit(
            record.id, StatusChanged(status="prompt.delivered", raw={"text": "plan the release"})
        )
        shutil.rmtree(store)
        path.parent.mkdir()
        with pytest.raises(ResumeRefused, match="gone"):
            await mgr.resume(record.id)
        fresh = await fresh_session(mgr, record.id)
        assert fresh.id != record.id and fresh.cwd == str(project)
        (first,) = mgr.prompts(fresh.id)
        assert "plan the release" in first.text
        assert "history the agent no longer has" in first.text
        assert mgr.get_session(record.id).state == SessionState.DISCONNECTED
