"""The hand-off flow against a stand-in vendor: one writer, many observers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from corral.events import TextComplete, WarningEvent
from corral.sessions import AdapterResolver, PromptState, SessionManager, SessionState
from corral.sessions._handoff import HandoffFlow

from ._vendor import append, texts, vendor_adapter, write_session

WAIT = 10.0


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "vendor-store"


@pytest.fixture
def terminal() -> set[str]:
    return set()


@pytest.fixture
async def flow(tmp_path: Path, store: Path, terminal: set[str]) -> AsyncIterator[HandoffFlow]:
    cls = vendor_adapter(store, terminal)
    resolver = AdapterResolver({"scripted": cls}, use_env=False, use_entry_points=False)
    mgr = SessionManager(tmp_path / "corral.db", resolver=resolver)
    async with mgr, HandoffFlow(mgr, poll=0.05, catch_up_quiet=0.2) as handoff:
        yield handoff


async def until(check: Callable[[], bool], what: str) -> None:
    deadline = asyncio.get_running_loop().time() + WAIT
    while not check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


def mirrored(flow: HandoffFlow, sid: str) -> list[str]:
    return [
        e.event.text
        for e in flow.manager.events(sid)
        if e.source == "terminal" and isinstance(e.event, TextComplete)
    ]


async def test_a_terminal_session_is_mirrored_and_taken_over_when_the_terminal_exits(
    flow: HandoffFlow, store: Path, terminal: set[str], project: Path
) -> None:
    path = write_session(store, "v1", project, "terminal: one")
    terminal.add("v1")
    link = await flow.link("scripted", "v1")
    sid = link.session_id
    mgr = flow.manager
    assert mgr.get_session(sid).state == SessionState.DETACHED
    await until(lambda: mirrored(flow, sid) == ["terminal: one"], "the history mirrored")
    append(path, "terminal: two")
    await until(lambda: mirrored(flow, sid) == ["terminal: one", "terminal: two"], "live mirror")

    prompt = mgr.send(sid, "corral: queued while the terminal writes")
    await asyncio.sleep(0.5)  # ten polls: corral must not write while the terminal holds it
    assert mgr.queue.get(prompt.id).state == PromptState.QUEUED
    assert not mgr.is_running(sid)
    assert texts(path) == ["terminal: one", "terminal: two"]

    terminal.discard("v1")
    await until(lambda: mgr.queue.get(prompt.id).state == PromptState.DELIVERED, "delivery")
    assert texts(path) == [
        "terminal: one",
        "terminal: two",
        "corral: queued while the terminal writes",
    ]
    assert mgr.is_running(sid)
    assert mgr.get_session(sid).agent_session_id == "v1"
    await asyncio.sleep(0.3)
    assert texts(path).count("corral: queued while the terminal writes") == 1


async def test_continue_in_terminal_releases_and_mirrors_only_new_turns(
    flow: HandoffFlow, store: Path, terminal: set[str], project: Path
) -> None:
    path = write_session(store, "v1", project, "terminal: one")
    link = await flow.link("scripted", "v1")
    sid = link.session_id
    mgr = flow.manager
    await until(lambda: mirrored(flow, sid) == ["terminal: one"], "history")
    first = mgr.send(sid, "corral: first")  # nobody holds it: corral takes over for the prompt
    await until(lambda: mgr.queue.get(first.id).state == PromptState.DELIVERED, "delivery")
    await until(lambda: mgr.get_session(sid).state == SessionState.IDLE, "idle")

    release = await flow.continue_in_terminal(sid)
    assert release.command == ["vendor", "--resume", "v1"]
    assert release.cwd == str(project)
    assert not mgr.is_running(sid)
    assert mgr.get_session(sid).state == SessionState.DETACHED

    terminal.add("v1")
    append(path, "terminal: after release")
    await until(lambda: "terminal: after release" in mirrored(flow, sid), "the new turn")
    # corral's own turn and the old history are not mirrored a second time
    assert mirrored(flow, sid) == ["terminal: one", "terminal: after release"]

    later = mgr.send(sid, "corral: second")
    await asyncio.sleep(0.4)
    assert mgr.queue.get(later.id).state == PromptState.QUEUED
    terminal.discard("v1")
    await until(lambda: mgr.queue.get(later.id).state == PromptState.DELIVERED, "delivery")
    assert texts(path) == [
        "terminal: one",
        "corral: first",
        "terminal: after release",
        "corral: second",
    ]


async def test_continue_in_terminal_refuses_a_busy_session(
    flow: HandoffFlow, store: Path, project: Path
) -> None:
    write_session(store, "v1", project)
    sid = (await flow.link("scripted", "v1")).session_id
    prompt = flow.manager.send(sid, "[hang] keep working")
    await until(lambda: flow.manager.get_session(sid).state == SessionState.BUSY, "busy")
    with pytest.raises(Exception, match="in a turn"):
        await flow.continue_in_terminal(sid)
    assert flow.manager.is_running(sid)
    assert flow.manager.queue.get(prompt.id).state == PromptState.DELIVERED


async def test_a_terminal_opening_an_idle_corral_session_makes_corral_step_back(
    flow: HandoffFlow, store: Path, terminal: set[str], project: Path
) -> None:
    write_session(store, "v1", project)
    sid = (await flow.link("scripted", "v1")).session_id
    mgr = flow.manager
    prompt = mgr.send(sid, "corral: hello")
    await until(lambda: mgr.queue.get(prompt.id).state == PromptState.DELIVERED, "delivery")
    await until(lambda: mgr.get_session(sid).state == SessionState.IDLE, "idle")
    terminal.add("v1")
    await until(lambda: mgr.get_session(sid).state == SessionState.DETACHED, "detached")
    assert not mgr.is_running(sid)


async def test_a_neighbour_in_the_directory_is_never_adopted_as_the_head(
    flow: HandoffFlow, store: Path, terminal: set[str], project: Path
) -> None:
    mine = write_session(store, "v1", project, "mine: one")
    terminal.add("v1")
    sid = (await flow.link("scripted", "v1")).session_id
    await until(lambda: mirrored(flow, sid) == ["mine: one"], "history")
    other = write_session(store, "v2", project, "a neighbour's conversation")  # newer, same dir
    prompt = flow.manager.send(sid, "corral: for my conversation")
    terminal.discard("v1")
    await until(
        lambda: flow.manager.queue.get(prompt.id).state == PromptState.DELIVERED, "delivery"
    )
    assert texts(mine)[-1] == "corral: for my conversation"
    assert texts(other) == ["a neighbour's conversation"]
    assert flow.manager.get_session(sid).agent_session_id == "v1"
    warnings = [e.event for e in flow.manager.events(sid) if isinstance(e.event, WarningEvent)]
    assert [w.code for w in warnings] == ["other_session_in_directory"]


async def test_a_resumed_lineage_head_is_adopted_when_it_continues_the_conversation(
    flow: HandoffFlow, store: Path, terminal: set[str], project: Path
) -> None:
    write_session(store, "v1", project, "mine: one")
    terminal.add("v1")
    sid = (await flow.link("scripted", "v1")).session_id
    await until(lambda: mirrored(flow, sid) == ["mine: one"], "history")
    # the terminal's --resume minted a new id that carries the conversation on
    head = write_session(store, "v1-resumed", project, "mine: one", "mine: two")
    prompt = flow.manager.send(sid, "corral: next")
    terminal.discard("v1")
    await until(
        lambda: flow.manager.queue.get(prompt.id).state == PromptState.DELIVERED, "delivery"
    )
    assert flow.manager.get_session(sid).agent_session_id == "v1-resumed"
    assert texts(head)[-1] == "corral: next"


async def test_links_survive_a_restart_without_mirroring_twice(
    tmp_path: Path, store: Path, terminal: set[str], project: Path
) -> None:
    path = write_session(store, "v1", project, "one", "two")
    terminal.add("v1")
    cls = vendor_adapter(store, terminal)
    resolver = AdapterResolver({"scripted": cls}, use_env=False, use_entry_points=False)
    mgr = SessionManager(tmp_path / "corral.db", resolver=resolver)
    async with mgr, HandoffFlow(mgr, poll=0.05) as handoff:
        sid = (await handoff.link("scripted", "v1")).session_id
        await until(lambda: mirrored(handoff, sid) == ["one", "two"], "history")
    append(path, "three")
    async with SessionManager(tmp_path / "corral.db", resolver=resolver) as mgr:
        assert mgr.get_session(sid).state == SessionState.DETACHED  # not "recovered"
        async with HandoffFlow(mgr, poll=0.05) as handoff:
            await until(lambda: "three" in mirrored(handoff, sid), "the new line")
            await asyncio.sleep(0.2)
            assert mirrored(handoff, sid) == ["one", "two", "three"]
