"""The SSE stream on a real uvicorn: several observers, resume by Last-Event-ID / ?after=."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

from corral.server._sse import format_event

from .conftest import api_client, live_server, make_app

WAIT = 10.0


async def read_sse(
    client: httpx.AsyncClient, url: str, *, until: str, headers: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """Parse SSE messages until one whose event type is ``until``."""
    out: list[dict[str, Any]] = []
    async with client.stream("GET", url, headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        message: dict[str, Any] = {}
        async for line in response.aiter_lines():
            if line.startswith(":"):
                continue
            if not line:
                if message:
                    out.append(message)
                    if message["event"] == until:
                        return out
                message = {}
                continue
            key, _, value = line.partition(": ")
            message[key] = json.loads(value) if key == "data" else value
    return out


async def test_two_observers_and_resume(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with live_server(app) as live, api_client(live.url, timeout=WAIT) as c:
        sid = (await c.post("/api/sessions", json={"adapter_id": "scripted"})).json()["id"]
        url = f"/api/sessions/{sid}/stream"
        observers = [
            asyncio.create_task(read_sse(c, url, until="turn.completed")) for _ in range(2)
        ]
        # no need to wait for the observers to connect: each replays from seq 1
        await c.post(f"/api/sessions/{sid}/prompts", json={"text": "hello"})
        first, second = await asyncio.wait_for(asyncio.gather(*observers), WAIT)
        assert [m["id"] for m in first] == [m["id"] for m in second]
        seqs = [int(m["id"]) for m in first]
        assert seqs == list(range(1, len(seqs) + 1))
        assert all(m["data"]["seq"] == int(m["id"]) for m in first)
        assert first[-1]["data"]["event"]["type"] == "turn.completed"

        # a reconnecting observer resumes after its Last-Event-ID; ?after= works the same
        cut = seqs[2]
        resumed = await asyncio.wait_for(
            read_sse(
                c,
                url + "?follow=false",
                until="turn.completed",
                headers={"Last-Event-ID": str(cut)},
            ),
            WAIT,
        )
        assert [int(m["id"]) for m in resumed] == [s for s in seqs if s > cut]
        by_query = await asyncio.wait_for(
            read_sse(c, f"{url}?after={cut}&follow=false", until="turn.completed"), WAIT
        )
        assert by_query == resumed
        missing = await c.get("/api/sessions/nope/stream")
        assert missing.status_code == 404


def test_format_event_has_id_type_and_envelope() -> None:
    from datetime import UTC, datetime

    from corral.events import Envelope, TextDelta

    env = Envelope(
        session_id="s",
        seq=7,
        ts=datetime(2026, 1, 1, tzinfo=UTC),
        source="x",
        event=TextDelta(text="hi"),
    )
    frame = format_event(env).decode()
    assert frame.startswith("id: 7\nevent: text.delta\ndata: {")
    assert frame.endswith("\n\n")


async def test_event_stream_sends_one_write_per_batch_and_a_keepalive_for_an_empty_one() -> None:
    from corral.server._sse import EventStream

    async def batches() -> AsyncIterator[list[bytes]]:
        yield [b"id: 1\n\n", b"id: 2\n\n"]
        yield []
        yield [b"id: 3\n\n"]

    sent: list[dict[str, Any]] = []
    never = asyncio.Event()

    async def receive() -> dict[str, Any]:
        await never.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await asyncio.wait_for(EventStream(batches())({"type": "http"}, receive, send), WAIT)
    assert sent[0]["type"] == "http.response.start"
    assert (b"content-type", b"text/event-stream; charset=utf-8") in sent[0]["headers"]
    bodies = [m["body"] for m in sent[1:]]
    assert bodies == [
        b": corral event stream\n\n",
        b"id: 1\n\nid: 2\n\n",  # the frames of one batch: one write
        b": keepalive\n\n",
        b"id: 3\n\n",
        b"",
    ]
    assert sent[-1]["more_body"] is False


async def test_event_stream_stops_following_when_the_client_goes_away() -> None:
    from corral.server._sse import EventStream

    closed = asyncio.Event()

    async def endless() -> AsyncIterator[list[bytes]]:
        try:
            while True:
                await asyncio.sleep(0.01)
                yield []
        finally:
            closed.set()

    async def receive() -> dict[str, Any]:
        await asyncio.sleep(0.05)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        pass

    await asyncio.wait_for(EventStream(endless())({"type": "http"}, receive, send), WAIT)
    assert closed.is_set()  # the feed was closed, so the hub forgets the observer


async def test_the_start_goes_through_the_middleware_and_the_body_to_the_servers_send() -> None:
    """Decision 050: the guard's headers are on the start; the body skips the wrappers."""
    from corral.server._sse import SERVER_SEND, EventStream

    async def batches() -> AsyncIterator[list[bytes]]:
        yield [b"id: 1\n\n"]

    wrapped: list[dict[str, Any]] = []
    server: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        await asyncio.Event().wait()
        return {"type": "http.disconnect"}

    async def middleware_send(message: dict[str, Any]) -> None:
        wrapped.append(message)

    async def server_send(message: dict[str, Any]) -> None:
        server.append(message)

    scope = {"type": "http", SERVER_SEND: server_send}
    await asyncio.wait_for(EventStream(batches())(scope, receive, middleware_send), WAIT)
    assert [m["type"] for m in wrapped] == ["http.response.start"]
    assert [m["body"] for m in server] == [b": corral event stream\n\n", b"id: 1\n\n", b""]


async def test_the_stream_of_a_real_server_carries_the_guards_headers(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with live_server(app) as live, api_client(live.url, timeout=WAIT) as c:
        sid = (await c.post("/api/sessions", json={"adapter_id": "scripted"})).json()["id"]
        await c.post(f"/api/sessions/{sid}/prompts", json={"text": "hello"})
        url = f"/api/sessions/{sid}/stream"
        async with c.stream("GET", url) as response:
            assert response.headers["x-frame-options"] == "DENY"
            assert response.headers["x-content-type-options"] == "nosniff"
        messages = await asyncio.wait_for(read_sse(c, url, until="turn.completed"), WAIT)
        assert messages[-1]["data"]["event"]["type"] == "turn.completed"
