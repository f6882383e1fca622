"""A long transcript opens at its tail, and the earlier turns arrive above it, each drawn once."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from corral.events import StatusChanged, TextComplete, TurnCompleted, Usage
from corral.sessions import AdapterResolver, SessionManager, SessionSpec
from corral.testing.scripted_adapter import ScriptedAdapter

from .conftest import LiveService

TURNS = 300


async def _fill(db: Path) -> str:
    resolver = AdapterResolver(
        {"scripted": ScriptedAdapter.configured()}, use_env=False, use_entry_points=False
    )
    async with SessionManager(db, resolver=resolver) as mgr:
        sid = (await mgr.create_session(SessionSpec(adapter_id="scripted"), start=False)).id
        for i in range(TURNS):
            raw = {"prompt_id": f"p{i}", "text": f"prompt {i}", "version": 1}
            for state in ("queued", "sending", "delivered"):
                mgr.emit(sid, StatusChanged(status=f"prompt.{state}", raw={**raw, "state": state}))
            for j in range(3):
                mgr.emit(sid, TextComplete(text=f"answer {i}.{j}", message_id=f"m{i}.{j}"))
            mgr.emit(sid, Usage(input_tokens=1, output_tokens=1, cost_usd=0.01))
            mgr.emit(sid, TurnCompleted())
        return sid


def test_long_transcript_tail_first_then_everything_once(
    context: Any, service: LiveService
) -> None:
    service.stop()
    # Playwright's sync API owns this thread's event loop: fill the database from another thread.
    with ThreadPoolExecutor(1) as pool:
        sid = pool.submit(asyncio.run, _fill(service.db_path)).result(120)
    service.start()
    page = context.new_page()
    page.goto(f"{service.url}/#/s/{sid}")
    expect(page.locator(".transcript.older")).to_have_count(1)
    expect(page.locator(".line.turn-end")).to_have_count(TURNS)
    expect(page.locator(".msg.user")).to_have_count(TURNS)
    texts = page.locator(".msg.user .body").all_text_contents()
    assert texts == [f"prompt {i}" for i in range(TURNS)]
    answers = page.locator(".msg.assistant").all_text_contents()
    assert answers == [f"answer {i}.{j}" for i in range(TURNS) for j in range(3)]
    # Usage sums both parts: 300 turns at $0.01.
    expect(page.locator(".session-usage")).to_contain_text("$3.00")
