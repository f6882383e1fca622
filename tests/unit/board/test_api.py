"""The board's HTTP surface on a real uvicorn: POST validation, SSE fan-out, resume, sessions."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
from server.conftest import api_client, live_server, make_app

WAIT = 10.0


def v1(i: int = 0, **fields: Any) -> dict[str, Any]:
    return {"v": 1, "session": "s1", "kind": "command", "summary": f"step {i}", **fields}


async def read_board(
    client: httpx.AsyncClient,
    url: str,
    *,
    count: int,
    headers: dict[str, str] | None = None,
    connected: asyncio.Event | None = None,
) -> list[dict[str, Any]]:
    """The first ``count`` SSE messages (board or missed) of ``url``."""
    out: list[dict[str, Any]] = []
    async with client.stream("GET", url, headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        message: dict[str, Any] = {}
        async for line in response.aiter_lines():
            if connected is not None:
                connected.set()
            if line.startswith(":") or line.startswith("retry:"):
                continue
            if not line:
                if message:
                    out.append(message)
                    if len(out) == count:
                        return out
                message = {}
                continue
            key, _, value = line.partition(": ")
            message[key] = json.loads(value) if key == "data" else value
    return out


async def test_post_validates_and_stores(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with live_server(app) as live, api_client(live.url, timeout=WAIT) as c:
        ok = await c.post("/api/events", json=v1(running=True, agent="a", task="t1"))
        assert ok.status_code == 201
        assert ok.json()["ids"] == [1]
        bad = await c.post("/api/events", json=v1(kind="nope"))
        assert bad.status_code == 400
        assert bad.json()["detail"] == {"path": "$.kind"}
        assert "unknown kind" in bad.json()["error"]
        huge = await c.post(
            "/api/events",
            content=b"[" + b" " * (1 << 20) + b"]",
            headers={"content-type": "application/json"},
        )
        assert huge.status_code == 413
        listing = (await c.get("/api/events")).json()
        assert listing["last_id"] == 1
        assert [e["summary"] for e in listing["events"]] == ["step 0"]
        assert (await c.get("/api/events?agent=other")).json()["events"] == []
        assert len((await c.get("/api/events?task=t1&kind=command")).json()["events"]) == 1


async def test_viewers_see_every_event_live_and_resume_by_id(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with live_server(app) as live, api_client(live.url, timeout=WAIT) as c:
        await c.post("/api/events", json=v1(0))  # before any viewer: not live
        ready = [asyncio.Event() for _ in range(3)]
        viewers = [
            asyncio.create_task(read_board(c, "/api/events/stream", count=5, connected=r))
            for r in ready
        ]
        filtered = asyncio.create_task(read_board(c, "/api/events/stream?kind=git", count=1))
        await asyncio.wait_for(asyncio.gather(*(r.wait() for r in ready)), WAIT)
        await asyncio.sleep(0.2)  # the filtered viewer's headers arrive with its first event
        for i in range(1, 6):
            await c.post("/api/events", json=v1(i, kind="git" if i == 4 else "command"))
        results = await asyncio.wait_for(asyncio.gather(*viewers), WAIT)
        for messages in results:
            assert [int(m["id"]) for m in messages] == [2, 3, 4, 5, 6]
            assert [m["data"]["summary"] for m in messages] == [f"step {i}" for i in range(1, 6)]
        [git] = await asyncio.wait_for(filtered, WAIT)
        assert git["data"]["kind"] == "git"

        resumed = await asyncio.wait_for(
            read_board(c, "/api/events/stream", count=3, headers={"Last-Event-ID": "3"}), WAIT
        )
        assert [int(m["id"]) for m in resumed] == [4, 5, 6]
        by_query = await asyncio.wait_for(
            read_board(c, "/api/events/stream?after=0", count=6), WAIT
        )
        assert [int(m["id"]) for m in by_query] == [1, 2, 3, 4, 5, 6]


async def test_service_sessions_appear_on_the_board(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with live_server(app) as live, api_client(live.url, timeout=WAIT) as c:
        sid = (await c.post("/api/sessions", json={"adapter_id": "scripted"})).json()["id"]
        await c.post(f"/api/sessions/{sid}/prompts", json={"text": "hello"})

        async def until_idle() -> list[dict[str, Any]]:
            while True:
                events = (await c.get(f"/api/events?session={sid}")).json()["events"]
                if any(e["kind"] == "idle" for e in events):
                    return events
                await asyncio.sleep(0.05)

        events = await asyncio.wait_for(until_idle(), WAIT)
        kinds = [e["kind"] for e in events]
        assert kinds[0] == "session"
        assert "idle" in kinds
        assert {e["agent"] for e in events} == {"scripted"}
        assert {e["source"] for e in events} == {"envelope"}
