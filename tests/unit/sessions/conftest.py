"""Fixtures for the session layer: a manager on a temp database and the scripted adapter."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from corral import _db
from corral.events import Envelope
from corral.sessions import AdapterResolver, SessionManager, SessionSpec, SessionStore
from corral.testing.scripted_adapter import ScriptedAdapter

WAIT = 10.0


def resolver_for(cls: type[ScriptedAdapter]) -> AdapterResolver:
    return AdapterResolver({"scripted": cls}, use_env=False, use_entry_points=False)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "corral.db"


@pytest.fixture
def adapter_cls() -> type[ScriptedAdapter]:
    return ScriptedAdapter.configured()


@pytest.fixture
def writer_kind() -> str:
    """The manager's writer; a module that runs on both overrides this with a parametrized
    fixture (``corral serve`` uses the process, the library the thread)."""
    return "thread"


@pytest.fixture
async def manager(
    db_path: Path, adapter_cls: type[ScriptedAdapter], writer_kind: str
) -> AsyncIterator[SessionManager]:
    async with SessionManager(
        db_path, resolver=resolver_for(adapter_cls), writer=writer_kind
    ) as mgr:
        yield mgr


async def new_session(mgr: SessionManager, **kw: Any) -> str:
    record = await mgr.create_session(SessionSpec(adapter_id="scripted", **kw))
    return record.id


async def wait_for(
    mgr: SessionManager,
    session_id: str,
    predicate: Callable[[Envelope], bool],
    *,
    after: int = 0,
    count: int = 1,
) -> list[Envelope]:
    """Follow the session until ``count`` envelopes match; fail after WAIT seconds."""
    seen: list[Envelope] = []

    async def follow() -> None:
        async for env in mgr.subscribe(session_id, after=after):
            if predicate(env):
                seen.append(env)
                if len(seen) >= count:
                    return

    await asyncio.wait_for(follow(), WAIT)
    return seen


def is_type(tag: str) -> Callable[[Envelope], bool]:
    return lambda env: env.event.__struct_config__.tag == tag


def prompt_state(state: str, prompt_id: str | None = None) -> Callable[[Envelope], bool]:
    def check(env: Envelope) -> bool:
        ev = env.event
        return (
            ev.__struct_config__.tag == "status"
            and getattr(ev, "status", None) == f"prompt.{state}"
            and (prompt_id is None or getattr(ev, "message", None) == prompt_id)
        )

    return check


def stored_session(db: Path) -> str:
    """A session row written straight to ``db`` (for tests of the writers and the queue)."""
    conn = _db.connect(db)
    sid = SessionStore(conn).create(SessionSpec(adapter_id="scripted")).id
    conn.close()
    return sid


def prompt_texts(db: Path, sid: str) -> list[str]:
    """What another process would find on disk (a plain reader: WAL readers never wait)."""
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            "SELECT text FROM prompts WHERE session_id = ? ORDER BY position", (sid,)
        ).fetchall()
    finally:
        conn.close()
    return [r[0] for r in rows]
