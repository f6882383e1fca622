"""Faults between the proxy and its upstream: the harness gets its own API's error, and nothing
leaks — the proxy's tasks and upstream connections are counted before and after each fault.

The proxy runs on the test's event loop (so its tasks can be counted); the scripted upstream runs
on its own thread.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from corral.proxy import Credential, ProxyServer, ProxySettings, read_usage
from corral.testing import FakeModelServer

from .conftest import TOKEN, profile_for

HEADERS = {"x-api-key": TOKEN, "anthropic-version": "2023-06-01"}
BODY = {
    "model": "claude-x",
    "max_tokens": 100,
    "stream": True,
    "messages": [{"role": "user", "content": "hello"}],
}


@pytest.fixture(scope="module")
def upstream() -> Iterator[FakeModelServer]:
    with FakeModelServer() as server:
        yield server


def any_reply(reply: dict[str, Any]) -> dict[str, Any]:
    """A scenario answering every request (side requests too: these bodies carry no tools)."""
    return {"steps": [{"match": {"kind": "any"}, "reply": reply}]}


class Running:
    def __init__(self, proxy: ProxyServer, usage: Path) -> None:
        self.proxy = proxy
        self.usage = usage

    def busy_connections(self) -> int:
        assert self.proxy.app.proxy is not None
        return self.proxy.app.proxy.client.busy

    def records(self) -> list[dict[str, Any]]:
        return read_usage(self.usage)


async def settle(baseline: int, running: Running) -> tuple[int, int]:
    """(tasks, busy upstream connections) once the proxy is quiet again (bounded wait)."""
    for _ in range(250):  # at most 5 s
        tasks = len(asyncio.all_tasks())
        if tasks <= baseline and running.busy_connections() == 0:
            break
        await asyncio.sleep(0.02)
    return len(asyncio.all_tasks()), running.busy_connections()


def make_proxy(
    upstream: FakeModelServer, tmp_path: Path, wire: str = "openai-chat", **profile: Any
) -> ProxyServer:
    settings = ProxySettings(
        profile=profile_for(wire, upstream.base_url, **profile),
        token=TOKEN,
        usage_log=str(tmp_path / "usage.jsonl"),
        max_retry_wait=0,
    )
    return ProxyServer(settings)


@pytest.fixture
async def running(upstream: FakeModelServer, tmp_path: Path) -> AsyncIterator[Running]:
    upstream.requests.clear()
    async with make_proxy(upstream, tmp_path, timeout=2.0) as proxy:
        yield Running(proxy, tmp_path / "usage.jsonl")


async def baseline_of(
    running: Running, client: httpx.AsyncClient, upstream: FakeModelServer
) -> int:
    upstream.set_scenario(any_reply({"text": "warm"}))
    response = await client.post("/v1/messages", json=BODY | {"stream": False}, headers=HEADERS)
    assert response.status_code == 200, response.text
    await asyncio.sleep(0.05)
    return len(asyncio.all_tasks())


async def test_upstream_disconnect_mid_stream_ends_with_anthropic_error_event(
    running: Running, upstream: FakeModelServer
) -> None:
    async with httpx.AsyncClient(base_url=running.proxy.base_url, timeout=10) as client:
        baseline = await baseline_of(running, client, upstream)
        upstream.set_scenario(
            any_reply({"text": "a long answer", "chunks": 6, "disconnect_after": 3})
        )
        response = await client.post("/v1/messages", json=BODY, headers=HEADERS)
        assert response.status_code == 200
        frames = response.text.strip().split("\n\n")
        assert frames[-1].startswith("event: error\n"), frames[-3:]
        assert json.loads(frames[-1].split("data: ", 1)[1])["type"] == "error"
        assert "message_stop" not in response.text
        assert upstream.requests.last().outcome == "server-disconnected"
        tasks, busy = await settle(baseline, running)
    assert (tasks, busy) == (baseline, 0)
    assert running.records()[-1]["outcome"] == "upstream-disconnected"


async def test_server_error_and_overloaded_keep_their_status(
    running: Running, upstream: FakeModelServer
) -> None:
    async with httpx.AsyncClient(base_url=running.proxy.base_url, timeout=10) as client:
        baseline = await baseline_of(running, client, upstream)
        for kind, status, etype in (
            ("server", 500, "api_error"),
            ("overloaded", 529, "overloaded_error"),
        ):
            upstream.set_scenario(any_reply({"error": {"kind": kind}}))
            response = await client.post("/v1/messages", json=BODY, headers=HEADERS)
            assert response.status_code == status
            assert response.json()["error"]["type"] == etype
        tasks, busy = await settle(baseline, running)
    assert (tasks, busy) == (baseline, 0)
    assert [r["status"] for r in running.records()[-2:]] == [500, 503]


async def test_slow_upstream_times_out_as_504_timeout_error(
    running: Running, upstream: FakeModelServer
) -> None:
    async with httpx.AsyncClient(base_url=running.proxy.base_url, timeout=10) as client:
        baseline = await baseline_of(running, client, upstream)
        upstream.set_scenario(any_reply({"text": "late", "hold": {"seconds": 8}}))
        response = await client.post("/v1/messages", json=BODY, headers=HEADERS)
        assert response.status_code == 504
        assert response.json() == {
            "type": "error",
            "error": {"type": "timeout_error", "message": "the upstream did not answer in time"},
        }
        upstream.release_holds()
        tasks, busy = await settle(baseline, running)
    assert (tasks, busy) == (baseline, 0)


async def test_stalled_stream_ends_with_in_stream_timeout(
    running: Running, upstream: FakeModelServer
) -> None:
    async with httpx.AsyncClient(base_url=running.proxy.base_url, timeout=10) as client:
        baseline = await baseline_of(running, client, upstream)
        upstream.set_scenario(
            any_reply({"text": "stalls", "chunks": 4, "hold": {"seconds": 8, "after_chunks": 2}})
        )
        response = await client.post(
            "/v1/chat/completions",
            json={"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
            headers={"authorization": f"Bearer {TOKEN}"},
        )
        assert response.status_code == 200
        last = response.text.strip().split("\n\n")[-1]
        assert json.loads(last.removeprefix("data: "))["error"]["code"] == "timeout"
        upstream.release_holds()
        tasks, busy = await settle(baseline, running)
    assert (tasks, busy) == (baseline, 0)


async def test_client_disconnect_cancels_the_upstream_request(
    running: Running, upstream: FakeModelServer
) -> None:
    async with httpx.AsyncClient(base_url=running.proxy.base_url, timeout=10) as client:
        baseline = await baseline_of(running, client, upstream)
        upstream.set_scenario(
            any_reply(
                {
                    "text": "never finished",
                    "chunks": 4,
                    "hold": {"seconds": None, "after_chunks": 2},
                }
            )
        )
        async with client.stream("POST", "/v1/messages", json=BODY, headers=HEADERS) as response:
            assert response.status_code == 200
            async for chunk in response.aiter_bytes():
                if b"message_start" in chunk:
                    break
        record = upstream.requests.last()
        for _ in range(200):
            if record.outcome != "pending":
                break
            await asyncio.sleep(0.02)
        assert upstream.requests.last().outcome == "client-disconnected"
        tasks, busy = await settle(baseline, running)
    assert (tasks, busy) == (baseline, 0)
    assert running.records()[-1]["outcome"] == "client-disconnected"


async def test_429_fails_over_to_the_next_credential(
    upstream: FakeModelServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="corral.proxy")
    upstream.requests.clear()
    credentials = [
        Credential(label="first", api_key="key-1"),
        Credential(label="second", api_key="key-2"),
    ]
    async with make_proxy(upstream, tmp_path, credentials=credentials) as proxy:
        running = Running(proxy, tmp_path / "usage.jsonl")
        async with httpx.AsyncClient(base_url=proxy.base_url, timeout=10) as client:
            baseline = await baseline_of(running, client, upstream)
            upstream.set_scenario(
                {
                    "steps": [
                        {
                            "match": {"kind": "any"},
                            "times": 1,
                            "reply": {"error": {"kind": "rate_limit", "retry_after": 30}},
                        },
                        {"match": {"kind": "any"}, "reply": {"text": "served by the second key"}},
                    ],
                    "default": {"text": "unused"},
                }
            )
            first = await client.post(
                "/v1/messages", json=BODY | {"stream": False}, headers=HEADERS
            )
            assert first.status_code == 200, first.text
            assert first.json()["content"][0]["text"] == "served by the second key"
            # The first credential stays benched (retry-after 30 s): the next request skips it.
            second = await client.post(
                "/v1/messages", json=BODY | {"stream": False}, headers=HEADERS
            )
            assert second.status_code == 200
            tasks, busy = await settle(baseline, running)
        assert (tasks, busy) == (baseline, 0)
    failovers = [
        json.loads(r.getMessage()) for r in caplog.records if "proxy.failover" in r.getMessage()
    ]
    assert failovers and failovers[0]["credential"] == "first" and failovers[0]["retry_after"] == 30
    assert "key-1" not in caplog.text and "key-2" not in caplog.text
    records = running.records()
    assert records[-2]["credential"] == "second"
    assert records[-2]["failovers"] == [{"credential": "first", "status": 429, "retry_after": 30.0}]
    assert records[-1]["credential"] == "second" and records[-1]["failovers"] == []
    assert [r.status for r in upstream.requests if r.endpoint == "chat/completions"][-3:] == [
        429,
        200,
        200,
    ]


async def test_429_on_every_credential_reaches_the_client_with_retry_after(
    upstream: FakeModelServer, tmp_path: Path
) -> None:
    credentials = [Credential(label="a", api_key="k1"), Credential(label="b", api_key="k2")]
    upstream.set_scenario(any_reply({"error": {"kind": "rate_limit", "retry_after": 12}}))
    proxy = make_proxy(upstream, tmp_path, credentials=credentials)
    async with proxy, httpx.AsyncClient(base_url=proxy.base_url, timeout=10) as client:
        response = await client.post("/v1/messages", json=BODY, headers=HEADERS)
    assert response.status_code == 429
    assert response.headers["retry-after"] == "12"
    assert response.json()["error"]["type"] == "rate_limit_error"
    record = read_usage(tmp_path / "usage.jsonl")[-1]
    assert [f["credential"] for f in record["failovers"]] == ["a", "b"]


@pytest.mark.parametrize(
    ("frames_sent", "message"),
    [(1, "the upstream stream ended early"), (0, "ended without a complete answer")],
)
async def test_a_stream_that_ends_cleanly_without_its_final_event_is_an_error(
    frames_sent: int, message: str
) -> None:
    """The upstream's HTTP body ends properly, but before ``finish_reason`` / ``[DONE]`` (or
    before anything at all)."""
    from corral.proxy import create_app

    chunk = {"id": "c1", "choices": [{"index": 0, "delta": {"content": "cut"}}]}

    class Body(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            for _ in range(frames_sent):
                yield f"data: {json.dumps(chunk)}\n\n".encode()

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=Body())

    upstream_client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    settings = ProxySettings(
        profile=profile_for("openai-chat", "http://upstream.invalid"), token=TOKEN, usage_log=""
    )
    app = create_app(settings, client=upstream_client)
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        response = await client.post("/v1/messages", json=BODY, headers=HEADERS)
    await app.shutdown()
    await upstream_client.aclose()
    frames = response.text.strip().split("\n\n")
    assert ("text_delta" in response.text) == bool(frames_sent)
    assert frames[-1].startswith("event: error\n"), frames[-2:]
    assert message in frames[-1]
