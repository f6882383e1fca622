"""The service settings and the attention webhook, against a local receiving HTTP server."""

from __future__ import annotations

import asyncio
import json
import stat
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from corral.events import ApprovalRequested, Envelope, TextDelta, TurnCompleted
from corral.server._webhook import attention_of, payload

from .conftest import client_for, make_app, manager_of

SECRET = "sk-ant-" + "a1b2c3d4e5f6g7h8"


class Receiver:
    """A loopback HTTP server on an ephemeral port recording every POST body as JSON."""

    def __init__(self, *, delay: float = 0.0, status: int = 204) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                time.sleep(delay)
                receiver.headers.append(dict(self.headers))
                receiver.bodies.append(json.loads(raw))
                self.send_response(status)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as r:
        yield r


async def _until(predicate: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def _turn(client: httpx.AsyncClient, text: str) -> str:
    r = await client.post("/api/sessions", json={"adapter_id": "scripted", "model": "m"})
    sid: str = r.json()["id"]
    await client.post(f"/api/sessions/{sid}/prompts", json={"text": text})
    return sid


async def test_attention_events_reach_the_webhook(tmp_path: Path, receiver: Receiver) -> None:
    async with client_for(make_app(tmp_path)) as client:
        assert (await client.get("/api/settings")).json()["webhook_url"] is None
        r = await client.put("/api/settings/webhook", json={"url": receiver.url})
        assert r.status_code == 200, r.text
        assert r.json()["webhook_url"] == receiver.url

        sid = await _turn(client, "[approve] go")
        await _until(lambda: any(b["attention"] == "approval" for b in receiver.bodies))
        approval = next(b for b in receiver.bodies if b["attention"] == "approval")
        assert approval["session_id"] == sid and approval["event"] == "approval.requested"
        assert approval["type"] == "corral.attention" and "Bash" in approval["summary"]
        assert receiver.headers[0]["Content-Type"] == "application/json"

        envs = manager_of(client).events(sid)
        rid = next(e.event.request_id for e in envs if isinstance(e.event, ApprovalRequested))
        await client.post(f"/api/sessions/{sid}/approvals/{rid}", json={"decision": "allow"})
        await _until(lambda: any(b["attention"] == "finished" for b in receiver.bodies))
        finished = next(b for b in receiver.bodies if b["attention"] == "finished")
        assert finished["summary"] == "turn finished (end_turn)"
        assert finished["seq"] > approval["seq"]

        await _turn(client, "[ask] which?")
        await _until(lambda: any(b["attention"] == "question" for b in receiver.bodies))
        await _until(lambda: client._transport.app.state.webhook.delivery.sent >= 3)  # type: ignore[attr-defined]
        view = (await client.get("/api/settings")).json()
        assert view["webhook_delivery"]["failed"] == 0
        assert view["webhook_delivery"]["last_status"] == 204

        # off again: nothing more is posted
        await client.put("/api/settings/webhook", json={"url": None})
        before = len(receiver.bodies)
        await _turn(client, "quiet")
        await asyncio.sleep(0.5)
        assert len(receiver.bodies) == before


async def test_a_hanging_receiver_never_blocks_a_session(tmp_path: Path) -> None:
    with Receiver(delay=3.0) as slow:
        async with client_for(make_app(tmp_path)) as client:
            webhook = client._transport.app.state.webhook  # type: ignore[attr-defined]
            webhook.timeout = 0.5
            await client.put("/api/settings/webhook", json={"url": slow.url})
            started = time.monotonic()
            sid = await _turn(client, "hello")
            manager = manager_of(client)
            await _until(
                lambda: any(isinstance(e.event, TurnCompleted) for e in manager.events(sid))
            )
            assert time.monotonic() - started < 2.5  # the turn did not wait for the POST
            await _until(lambda: webhook.delivery.failed >= 1, timeout=5)
            assert "Timeout" in webhook.delivery.last_error


async def test_only_http_urls_and_settings_persist(tmp_path: Path, receiver: Receiver) -> None:
    async with client_for(make_app(tmp_path)) as client:
        for bad in ["ftp://x/y", "javascript:alert(1)", "file:///etc/passwd", "http://", "nope"]:
            r = await client.put("/api/settings/webhook", json={"url": bad})
            assert r.status_code == 422, bad
        r = await client.put("/api/settings/webhook", json={"url": 5})
        assert r.status_code == 422
        r = await client.put("/api/settings/webhook", json={"url": receiver.url, "x": 1})
        assert r.status_code == 422
        await client.put("/api/settings/webhook", json={"url": receiver.url})
    path = tmp_path / "settings.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    async with client_for(make_app(tmp_path)) as client:  # a restart keeps it
        assert (await client.get("/api/settings")).json()["webhook_url"] == receiver.url


def test_payload_is_redacted_and_other_events_raise_nothing() -> None:
    now = datetime.now(UTC)
    env = Envelope(
        session_id="s",
        seq=3,
        ts=now,
        source="x",
        event=ApprovalRequested(request_id="r", tool_name="Bash", cmd=f"curl -d {SECRET}"),
    )
    event = attention_of(env)
    assert event is not None and event.attention == "approval"
    body = json.loads(payload(event))
    assert SECRET not in json.dumps(body) and "[REDACTED]" in body["summary"]
    quiet = Envelope(session_id="s", seq=4, ts=now, source="x", event=TextDelta(text="hi"))
    assert attention_of(quiet) is None
