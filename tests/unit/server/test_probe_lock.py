"""A session never starts its agent while a model probe of the same adapter still runs one."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import ClassVar

import pytest

from corral.adapters._model_info import ModelInfo
from corral.events import AgentInfo
from corral.server import Settings, create_app
from corral.sessions import AdapterResolver
from corral.testing.scripted_adapter import ScriptedAdapter

from .conftest import TOKEN, client_for


class Slow(ScriptedAdapter):
    """Lists its models slowly; logs when each instance starts and stops its 'agent'."""

    agent_id = "slow"
    provides_models = True
    log: ClassVar[list[str]] = []
    probing: ClassVar[asyncio.Event | None] = None

    async def start(self, session_id: str) -> AgentInfo:
        kind = "probe" if session_id.startswith("models-") else "session"
        self._kind = kind
        self.log.append(f"{kind} start")
        if kind == "probe" and self.probing is not None:
            self.probing.set()
        return await super().start(session_id)

    async def list_models(self) -> list[str]:
        return [m.id for m in await self.describe_models()]

    async def describe_models(self) -> list[ModelInfo]:
        await asyncio.sleep(0.5)
        return [ModelInfo(id="m1")]

    async def stop(self) -> None:
        self.log.append(f"{self._kind} stop")
        await super().stop()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


async def test_session_start_waits_for_the_probe(tmp_path: Path, home: Path) -> None:
    Slow.log.clear()
    Slow.probing = asyncio.Event()
    resolver = AdapterResolver({"slow": Slow}, use_env=False, use_entry_points=False)
    app = create_app(Settings(db_path=tmp_path / "c.db", token=TOKEN), resolver=resolver)
    async with client_for(app) as client:
        probe = asyncio.create_task(client.get("/api/adapters/slow/models"))
        await asyncio.wait_for(Slow.probing.wait(), 10)
        created = await client.post(
            "/api/sessions", json={"adapter_id": "slow", "cwd": str(tmp_path), "start": True}
        )
        assert created.status_code == 201, created.text
        assert (await probe).json()["models"] == ["m1"]
    assert Slow.log.index("probe stop") < Slow.log.index("session start"), Slow.log
