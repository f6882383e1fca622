"""Fixtures: the app on a temp database with the scripted adapter; a real uvicorn for streaming.

Every request needs the token (docs/security.md): apps made here use :data:`TOKEN`, and clients
made here send :data:`AUTH`; use :func:`api_client` for a client of a live server.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette

from corral.server import Settings, create_app
from corral.sessions import AdapterResolver, SessionManager
from corral.testing.scripted_adapter import ScriptedAdapter

TOKEN = "test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def make_app(tmp_path: Path, **settings: Any) -> Starlette:
    resolver = AdapterResolver(
        {"scripted": ScriptedAdapter.configured()}, use_env=False, use_entry_points=False
    )
    settings.setdefault("token", TOKEN)
    return create_app(Settings(db_path=tmp_path / "corral.db", **settings), resolver=resolver)


def api_client(base_url: str, **kwargs: Any) -> httpx.AsyncClient:
    """A client that follows the service's rules like the CLI and the page do: the bearer token
    on every request, and every request declared JSON (the service refuses other mutations)."""
    headers = {**AUTH, "Content-Type": "application/json"}
    return httpx.AsyncClient(base_url=base_url, headers=headers, **kwargs)


@contextlib.asynccontextmanager
async def client_for(app: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with api_client("http://127.0.0.1", transport=transport) as client:
            yield client


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(make_app(tmp_path)) as c:
        yield c


class LiveServer:
    """uvicorn on a socket bound and listening before it starts: clients can connect at once."""

    def __init__(self, app: Starlette) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))


@contextlib.asynccontextmanager
async def live_server(app: Starlette) -> AsyncIterator[LiveServer]:
    live = LiveServer(app)
    task = asyncio.create_task(live.server.serve(sockets=[live.sock]))
    try:
        yield live
    finally:
        live.server.should_exit = True
        await asyncio.wait_for(task, 10)
        live.sock.close()


def manager_of(client: httpx.AsyncClient) -> SessionManager:
    app = client._transport.app  # type: ignore[attr-defined]
    manager: SessionManager = app.state.manager
    return manager


async def wait_prompt_state(client: httpx.AsyncClient, sid: str, pid: str, state: str) -> None:
    """Wait on the session's event stream until the prompt reaches ``state``."""

    async def follow() -> None:
        async for env in manager_of(client).subscribe(sid):
            raw = getattr(env.event, "raw", None)
            if isinstance(raw, dict) and raw.get("prompt_id") == pid and raw.get("state") == state:
                return

    await asyncio.wait_for(follow(), 10)
