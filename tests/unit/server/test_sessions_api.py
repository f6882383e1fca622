from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import jsonschema

from corral.events import ApprovalRequested
from corral.server._openapi import openapi_document

from .conftest import client_for, make_app, manager_of, wait_prompt_state

WAIT = 10.0


async def test_session_lifecycle_over_rest(client: httpx.AsyncClient) -> None:
    r = await client.post(
        "/api/sessions",
        json={"adapter_id": "scripted", "model": "m", "intent": "act-pr"},
    )
    assert r.status_code == 422, r.text  # the scripted agent enforces no intent
    assert r.json()["code"] == "intent_refused"
    assert r.json()["detail"]["intent"] == "act-pr"
    assert (await client.get("/api/sessions")).json() == []  # refused before anything is stored
    r = await client.post("/api/sessions", json={"adapter_id": "scripted", "model": "m"})
    assert r.status_code == 201, r.text
    session = r.json()
    sid = session["id"]
    assert session["intent"] is None
    assert [s["id"] for s in (await client.get("/api/sessions")).json()] == [sid]

    hang = (await client.post(f"/api/sessions/{sid}/prompts", json={"text": "[hang]"})).json()
    await wait_prompt_state(client, sid, hang["id"], "delivered")
    queued = (await client.post(f"/api/sessions/{sid}/prompts", json={"text": "a"})).json()
    assert queued["state"] == "queued"
    edited = await client.patch(
        f"/api/prompts/{queued['id']}", json={"text": "a2", "expected_version": 1}
    )
    assert edited.json()["version"] == 2
    stale = await client.patch(
        f"/api/prompts/{queued['id']}", json={"text": "a3", "expected_version": 1}
    )
    assert stale.status_code == 409
    other = (await client.post(f"/api/sessions/{sid}/prompts", json={"text": "b"})).json()
    assert (await client.post(f"/api/prompts/{other['id']}/cancel")).json()["state"] == "canceled"
    status = (await client.get(f"/api/sessions/{sid}/status")).json()
    assert status["busy"] is True
    assert status["queue"] == {"canceled": 1, "delivered": 1, "queued": 1}

    assert (await client.post(f"/api/sessions/{sid}/stop")).json() == {"ok": True}
    await wait_prompt_state(client, sid, queued["id"], "delivered")
    shown = (await client.get(f"/api/sessions/{sid}")).json()
    assert [p["text"] for p in shown["prompts"]] == ["[hang]", "a2", "b"]
    events = (await client.get(f"/api/sessions/{sid}/events", params={"after": 2})).json()
    assert events[0]["seq"] == 3
    assert all(e["session_id"] == sid for e in events)

    repair = (await client.post(f"/api/sessions/{sid}/repair")).json()
    assert repair["ok"] is False
    killed = (await client.post(f"/api/sessions/{sid}/kill")).json()
    assert killed["state"] == "ended"
    gone = await client.post(f"/api/sessions/{sid}/prompts", json={"text": "late"})
    assert gone.status_code == 409


async def test_approvals_questions_and_view(client: httpx.AsyncClient) -> None:
    sid = (await client.post("/api/sessions", json={"adapter_id": "scripted"})).json()["id"]
    await client.post(f"/api/sessions/{sid}/prompts", json={"text": "[approve]"})

    async def requested() -> str:
        async for env in manager_of(client).subscribe(sid):
            if isinstance(env.event, ApprovalRequested):
                return env.event.request_id
        raise AssertionError("stream ended")

    rid = await asyncio.wait_for(requested(), WAIT)
    status = (await client.get(f"/api/sessions/{sid}/status")).json()
    assert status["pending_approvals"] == [rid]
    r = await client.post(f"/api/sessions/{sid}/approvals/{rid}", json={"decision": "allow"})
    assert r.json() == {"ok": True}
    bad = await client.post(f"/api/sessions/{sid}/approvals/x", json={"decision": "maybe"})
    assert bad.status_code == 422

    view = {"draft_text": "hi", "edit_target": None, "scroll_position": 3.0, "follow": False}
    saved = (await client.put(f"/api/sessions/{sid}/view", json=view)).json()
    assert saved["draft_text"] == "hi"
    assert (await client.get(f"/api/sessions/{sid}/view")).json()["follow"] is False


async def test_errors_map_to_statuses(client: httpx.AsyncClient) -> None:
    assert (await client.get("/api/sessions/nope")).status_code == 404
    r = await client.post("/api/sessions", json={"adapter_id": "nope"})
    assert r.status_code == 404
    assert r.json()["type"] == "AdapterNotFoundError"
    assert (await client.post("/api/sessions", json={"bogus": 1})).status_code == 422
    sid = (
        await client.post("/api/sessions", json={"adapter_id": "scripted", "start": False})
    ).json()["id"]
    bad_after = await client.get(f"/api/sessions/{sid}/events", params={"after": "x"})
    assert bad_after.status_code == 422
    missing = await client.get("/api/prompts/nope")
    assert missing.status_code == 404
    assert missing.json()["type"] == "PromptNotFoundError"


async def test_queue_full_is_429(tmp_path: Path) -> None:
    async with client_for(make_app(tmp_path, queue_limit=2)) as client:
        sid = (
            await client.post("/api/sessions", json={"adapter_id": "scripted", "start": False})
        ).json()["id"]
        for text in ("a", "b"):
            assert (
                await client.post(f"/api/sessions/{sid}/prompts", json={"text": text})
            ).status_code == 201
        r = await client.post(f"/api/sessions/{sid}/prompts", json={"text": "c"})
        assert r.status_code == 429
        assert r.json()["detail"] == {"limit": 2}


async def test_token_required_on_loopback_too(tmp_path: Path) -> None:
    async with client_for(make_app(tmp_path)) as client:
        anonymous = {"Authorization": ""}
        assert (await client.get("/api/health", headers=anonymous)).status_code == 200
        assert (await client.get("/api/sessions", headers=anonymous)).status_code == 401
        r = await client.post("/api/sessions", json={"adapter_id": "scripted"}, headers=anonymous)
        assert r.status_code == 401
        wrong = {"Authorization": "Bearer wrong"}
        assert (await client.get("/api/sessions", headers=wrong)).status_code == 401
        assert (await client.get("/api/sessions")).status_code == 200  # the fixture's token
    assert make_app(tmp_path / "b", token=None).state.token  # no token given: a random one


async def test_openapi_matches_routes(client: httpx.AsyncClient) -> None:
    doc = (await client.get("/api/openapi.json")).json()
    assert doc == json.loads(json.dumps(openapi_document()))
    app_routes = {
        (route.path, method.lower())
        for route in client._transport.app.routes  # type: ignore[attr-defined]
        for method in (route.methods or ())
        if route.path.startswith("/api") and method != "HEAD"
    }
    doc_routes = {(path, m) for path, ops in doc["paths"].items() for m in ops}
    assert app_routes == doc_routes
    for schema in doc["components"]["schemas"].values():
        jsonschema.Draft202012Validator.check_schema(schema)
    refs = {m["$ref"].rsplit("/", 1)[1] for m in _refs(doc["paths"])}
    assert refs <= set(doc["components"]["schemas"])


def _refs(node: Any) -> list[dict[str, str]]:
    if isinstance(node, dict):
        own = [node] if "$ref" in node else []
        return own + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []
