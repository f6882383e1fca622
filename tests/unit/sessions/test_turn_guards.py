"""Prompts are checked before they reach an agent, and a silent turn is stopped by the watchdog."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from corral.adapters._turns import check_prompt
from corral.adapters.base import Attachment, BaseAdapter
from corral.adapters.claude import ClaudeAdapter
from corral.errors import InvalidPromptError
from corral.events import (
    AgentInfo,
    Error,
    Event,
    SessionEnded,
    StopReason,
    TextDelta,
    TurnCompleted,
)
from corral.sessions import AdapterResolver, SessionManager, SessionSpec, SessionState

from .conftest import is_type, new_session, resolver_for, wait_for

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("   \n\t ", "whitespace"),
        ("a\x00b", "NUL"),
        ("lone \ud83d surrogate", "surrogate"),
        (b"bytes", "must be text"),
        (None, "must be text"),
    ],
)
def test_invalid_prompts_are_refused_with_the_reason(text: Any, reason: str) -> None:
    with pytest.raises(InvalidPromptError, match=reason):
        check_prompt(text)


def test_an_image_alone_is_a_prompt() -> None:
    assert check_prompt("", [Attachment(data=b"x", media_type="image/png")]) == ""


async def test_every_adapters_send_refuses_before_it_writes() -> None:
    adapter = ClaudeAdapter(binary="/nonexistent/claude")  # never started: a write would fail
    with pytest.raises(InvalidPromptError, match="empty"):
        await adapter.send("")
    with pytest.raises(InvalidPromptError, match="whitespace"):
        await adapter.send_acknowledged("  ", None, ack=lambda: None)


async def test_the_session_layer_refuses_and_stores_nothing(manager: SessionManager) -> None:
    sid = await new_session(manager)
    with pytest.raises(InvalidPromptError):
        manager.send(sid, "  ")
    assert manager.prompts(sid) == []
    queued = manager.send(sid, "fine")
    with pytest.raises(InvalidPromptError):
        manager.edit_prompt(queued.id, "")


def test_corral_run_refuses_an_empty_prompt_before_starting_anything(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    agent = tmp_path / "agent"
    agent.write_text(f"#!/bin/sh\ntouch {marker}\nsleep 30\n")
    agent.chmod(0o755)
    done = subprocess.run(
        [sys.executable, "-m", "corral", "run", "qwen", "   ", "--binary", str(agent)],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "CORRAL_HOME": str(tmp_path / "home")},
    )
    assert done.returncode == 2
    assert "invalid prompt" in done.stderr.lower()
    assert not marker.exists()  # the agent was never started


class Silent(BaseAdapter):
    """Accepts a prompt and then says nothing; its interrupt ends the turn cancelled."""

    agent_id = "silent"
    display_name = "silent"
    provides_models = False
    provides_usage = False
    cap_interrupt = True
    cap_cancel = True

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Event] = asyncio.Queue()
        self.turns = 0

    async def start(self, session_id: str) -> AgentInfo:
        return self.make_agent_info()

    async def send(self, text: str, attachments: Sequence[Attachment] | None = None) -> None:
        self.turns += 1
        if self.turns > 1:  # the second turn answers
            await self.queue.put(TextDelta(text="answered"))
            await self.queue.put(TurnCompleted(stop_reason=StopReason.END_TURN))

    async def interrupt(self) -> None:
        await self.queue.put(TurnCompleted(stop_reason=StopReason.CANCELLED))

    async def stream(self) -> AsyncIterator[Event]:
        while True:
            event = await self.queue.get()
            yield event
            if isinstance(event, SessionEnded):
                return

    async def stop(self) -> None:
        await self.queue.put(SessionEnded(reason="completed"))  # type: ignore[arg-type]


async def test_a_silent_turn_is_stopped_and_the_session_stays_usable(db_path: Path) -> None:
    resolver = AdapterResolver({"silent": Silent}, use_env=False, use_entry_points=False)
    async with SessionManager(db_path, resolver=resolver, idle_timeout=0.5) as mgr:
        sid = (await mgr.create_session(SessionSpec(adapter_id="silent"))).id
        mgr.send(sid, "hello?")
        (err,) = await wait_for(mgr, sid, lambda e: isinstance(e.event, Error))
        assert isinstance(err.event, Error) and err.event.code == "agent_unresponsive"
        (turn,) = await wait_for(mgr, sid, is_type("turn.completed"), after=err.seq)
        assert isinstance(turn.event, TurnCompleted)
        assert turn.event.stop_reason is StopReason.CANCELLED
        assert mgr.get_session(sid).state == SessionState.IDLE  # not stuck busy
        mgr.send(sid, "again")
        (second,) = await wait_for(mgr, sid, is_type("turn.completed"), after=turn.seq)
        assert isinstance(second.event, TurnCompleted)
        assert second.event.stop_reason is StopReason.END_TURN


async def test_no_watchdog_when_the_turn_talks(db_path: Path) -> None:
    cls = resolver_for
    async with SessionManager(db_path, resolver=cls(_chatty()), idle_timeout=0.5) as mgr:
        sid = await new_session(mgr)
        mgr.send(sid, "talk slowly")
        (turn,) = await wait_for(mgr, sid, is_type("turn.completed"))
        assert isinstance(turn.event, TurnCompleted)
        assert turn.event.stop_reason is StopReason.END_TURN
        assert not [e for e in mgr.events(sid) if isinstance(e.event, Error)]


def _chatty():  # type: ignore[no-untyped-def]
    from corral.testing.scripted_adapter import ScriptedAdapter

    # 8 chunks 0.2 s apart: 1.6 s in all, never 0.5 s silent
    return ScriptedAdapter.configured(replies=("a b c d e f g h",), chunks=8, chunk_delay=0.2)
