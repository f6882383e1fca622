"""The manager drives both stream styles, and refuses what an adapter cannot do."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from corral.adapters.base import Attachment, BaseAdapter
from corral.errors import SessionError, UnsupportedOperation
from corral.events import AgentInfo, Event, TextComplete, TurnCompleted
from corral.sessions import AdapterResolver, SessionManager, SessionSpec

from .conftest import is_type, wait_for


class PerTurnEcho(BaseAdapter):
    """Seed 003's example shape: each ``stream()`` call yields one turn and returns."""

    agent_id = "per-turn"
    display_name = "Per-turn echo"
    provides_models = False
    provides_usage = False

    def __init__(self) -> None:
        self.inbox: asyncio.Queue[str] = asyncio.Queue()

    async def start(self, session_id: str) -> AgentInfo:
        return self.make_agent_info()

    async def send(self, text: str, attachments: Sequence[Attachment] | None = None) -> None:
        await self.inbox.put(text)

    async def stream(self) -> AsyncIterator[Event]:
        text = await self.inbox.get()
        yield TextComplete(text=f"you said: {text}")
        yield TurnCompleted()

    async def stop(self) -> None:
        pass


async def test_per_turn_streams_and_missing_surfaces(tmp_path: Path) -> None:
    resolver = AdapterResolver({"per-turn": PerTurnEcho}, use_env=False, use_entry_points=False)
    async with SessionManager(tmp_path / "db", resolver=resolver) as mgr:
        sid = (await mgr.create_session(SessionSpec(adapter_id="per-turn"))).id
        for text in ("one", "two", "three"):
            mgr.send(sid, text)
        await wait_for(mgr, sid, is_type("turn.completed"), count=3)
        texts = [e.event.text for e in mgr.events(sid) if isinstance(e.event, TextComplete)]
        assert texts == ["you said: one", "you said: two", "you said: three"]
        # no interrupt(), no respond_approval(), no cap_resume: clear refusals
        with pytest.raises(UnsupportedOperation, match="interrupt"):
            await mgr.stop_turn(sid)
        with pytest.raises(UnsupportedOperation, match="respond_approval"):
            await mgr.respond_approval(sid, "r1", "allow")  # type: ignore[arg-type]
        with pytest.raises(UnsupportedOperation, match="answer_question"):
            await mgr.answer_question(sid, "q1", {})
        assert (await mgr.status(sid)).adapter_status is None
    async with SessionManager(tmp_path / "db", resolver=resolver) as mgr2:
        with pytest.raises(SessionError, match="cannot resume"):
            await mgr2.resume(sid)
