"""The hand-off routes: listing vendor sessions, linking, continue in terminal, resume refusals."""

from __future__ import annotations

import asyncio
import contextlib
import shlex
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, ClassVar

import httpx

from corral.adapters.claude import ClaudeAdapter
from corral.server import Settings, create_app
from corral.sessions import AdapterResolver

from ._recorded import recorded
from ._vendor import vendor_adapter, write_session

TOKEN = "handoff-token"


@contextlib.asynccontextmanager
async def client_for(app: Any) -> AsyncIterator[httpx.AsyncClient]:
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            base_url="http://127.0.0.1", transport=transport, headers=headers
        ) as client:
            yield client


def _app(tmp_path: Path, adapters: dict[str, Any]) -> Any:
    resolver = AdapterResolver(adapters, use_env=False, use_entry_points=False)
    return create_app(Settings(db_path=tmp_path / "corral.db", token=TOKEN), resolver=resolver)


async def _until_state(client: httpx.AsyncClient, sid: str, state: str) -> dict[str, Any]:
    for _ in range(400):
        data: dict[str, Any] = (await client.get(f"/api/sessions/{sid}")).json()["session"]
        if data["state"] == state:
            return data
        await asyncio.sleep(0.025)
    raise AssertionError(f"session {sid} never became {state}")


async def test_links_are_listed_and_guarded(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    store = tmp_path / "store"
    write_session(store, "v1", project)
    cls = vendor_adapter(store, set())
    async with client_for(_app(tmp_path, {"scripted": cls})) as client:
        assert (await client.get("/api/handoff/links")).json() == []
        made = await client.post("/api/handoff/links", json={"adapter_id": "scripted", "sid": "v1"})
        (listed,) = (await client.get("/api/handoff/links")).json()
        assert listed["session_id"] == made.json()["session"]["id"]
        assert listed["external_sid"] == "v1" and listed["cwd"] == str(project)
        anonymous = await client.get("/api/handoff/links", headers={"Authorization": ""})
        assert anonymous.status_code == 401
        bad = await client.post(
            "/api/handoff/links", json={"adapter_id": "scripted", "sid": "v1", "cwd": "relative"}
        )
        assert bad.status_code == 422
        extra = await client.post(
            "/api/handoff/links", json={"adapter_id": "x", "sid": "v", "y": 1}
        )
        assert extra.status_code == 422


async def test_a_claude_session_whose_project_is_gone_is_not_linked(tmp_path: Path) -> None:
    rec = recorded("claude", tmp_path)

    class StoredClaude(ClaudeAdapter):
        store_env: ClassVar[dict[str, str]] = rec.env

    (entry,) = list(StoredClaude.scan_external_sessions(env=rec.env))
    assert entry.cwd == rec.cwd  # recorded in a temporary project that no longer exists
    async with client_for(_app(tmp_path, {"claude-code": StoredClaude})) as client:
        made = await client.post(
            "/api/handoff/links", json={"adapter_id": "claude-code", "sid": entry.sid}
        )
        assert made.status_code == 400, made.text
        assert rec.cwd in made.json()["error"]
        assert (await client.get("/api/handoff/links")).json() == []


async def test_link_then_continue_in_terminal(tmp_path: Path) -> None:
    project = tmp_path / "my project"
    project.mkdir()
    store = tmp_path / "store"
    write_session(store, "v1", project, "hello")
    cls = vendor_adapter(store, set())
    async with client_for(_app(tmp_path, {"scripted": cls})) as client:
        made = await client.post("/api/handoff/links", json={"adapter_id": "scripted", "sid": "v1"})
        assert made.status_code == 201, made.text
        sid = made.json()["session"]["id"]
        assert made.json()["session"]["state"] == "detached"
        again = await client.post(
            "/api/handoff/links", json={"adapter_id": "scripted", "sid": "v1"}
        )
        assert again.json()["session"]["id"] == sid  # one corral session per vendor session

        shown = (await client.get(f"/api/sessions/{sid}/handoff")).json()
        assert shown["link"]["external_sid"] == "v1"
        assert shown["resume_command"] == ["vendor", "--resume", "v1"]

        sent = await client.post(f"/api/sessions/{sid}/prompts", json={"text": "from the app"})
        assert sent.status_code == 201, sent.text
        await _until_state(client, sid, "idle")  # nobody held it: corral took over for it

        released = await client.post(f"/api/sessions/{sid}/handoff/terminal")
        assert released.status_code == 200, released.text
        body = released.json()
        assert body["argv"] == ["vendor", "--resume", "v1"]
        assert shlex.split(body["shell"]) == ["cd", str(project), "&&", "vendor", "--resume", "v1"]
        assert (await client.get(f"/api/sessions/{sid}")).json()["session"]["state"] == "detached"

        unknown = await client.post(
            "/api/handoff/links", json={"adapter_id": "scripted", "sid": "nope"}
        )
        assert unknown.status_code == 400
        assert "no stored session" in unknown.json()["error"]


async def test_a_refused_resume_says_why_and_the_fresh_offer_works(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    store = tmp_path / "store"
    path = write_session(store, "v1", project)
    cls = vendor_adapter(store, set())
    async with client_for(_app(tmp_path, {"scripted": cls})) as client:
        made = await client.post("/api/handoff/links", json={"adapter_id": "scripted", "sid": "v1"})
        sid = made.json()["session"]["id"]
        await client.post(f"/api/sessions/{sid}/prompts", json={"text": "remember the plan"})
        await _until_state(client, sid, "idle")
        await client.post(f"/api/sessions/{sid}/handoff/terminal")
        path.unlink()
        refused = await client.post(f"/api/sessions/{sid}/resume", json={})
        # detached is not resumable by hand; the take-over refuses the lost session by itself
        assert refused.status_code == 409
        store_gone = await client.get(f"/api/sessions/{sid}/events")
        assert store_gone.status_code == 200
        fresh = await client.post(f"/api/sessions/{sid}/resume", json={"fresh": True})
        assert fresh.status_code == 201, fresh.text
        new_id = fresh.json()["id"]
        prompts = (await client.get(f"/api/sessions/{new_id}/prompts")).json()
        assert "remember the plan" in prompts[0]["text"]
