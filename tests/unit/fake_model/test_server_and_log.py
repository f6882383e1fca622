from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import httpx
import pytest

from corral.testing import FakeModelServer, RequestRecord

CHAT = {
    "model": "m",
    "messages": [{"role": "user", "content": "hello"}],
    "tools": [{"type": "function", "function": {"name": "bash"}}],
}


def test_unknown_paths_are_logged_404(fake: FakeModelServer, client: httpx.Client) -> None:
    assert client.get("/v2/whatever").status_code == 404
    assert client.post("/v1/embeddings", json={"input": "x"}).status_code == 404
    missing = fake.requests.not_found()
    assert [(r.method, r.path, r.endpoint) for r in missing] == [
        ("GET", "/v2/whatever", "not-found"),
        ("POST", "/v1/embeddings", "not-found"),
    ]
    assert missing[1].body == {"input": "x"}


def test_openai_and_anthropic_model_listing(client: httpx.Client) -> None:
    listing = client.get("/v1/models").json()
    assert listing["object"] == "list"
    assert listing["data"][0]["id"] == "fake-model"
    assert client.get("/v1/models/fake-model").json()["id"] == "fake-model"


def test_secrets_are_not_logged_and_jsonl_is_written(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    with FakeModelServer(log_path=log) as fake, httpx.Client(base_url=fake.base_url) as http:
        http.post(
            "/v1/chat/completions",
            json=CHAT,
            headers={"authorization": "Bearer sk-secret", "x-api-key": "secret", "x-app": "cli"},
        )
        fake.requests.wait_for(lambda view: view.last().outcome == "complete")
    record = fake.requests[0]
    assert "authorization" not in record.headers
    assert "x-api-key" not in record.headers
    assert record.headers["x-app"] == "cli"
    lines = log.read_text().splitlines()
    assert len(lines) == 1
    logged = json.loads(lines[0])
    assert "sk-secret" not in lines[0]
    assert logged["wire_api"] == "openai-chat"
    assert logged["is_main"] is True
    assert logged["tool_names"] == ["bash"]
    assert logged["user_texts"] == ["hello"]
    assert logged["messages"] == [
        {
            "role": "user",
            "text": "hello",
            "tool_calls": [],
            "tool_call_id": None,
            "has_image": False,
        }
    ]


def test_set_scenario_resets_turns(fake: FakeModelServer, client: httpx.Client) -> None:
    fake.set_scenario({"steps": [{"match": {"turn": 2}, "reply": {"text": "second"}}]})
    answers = [
        client.post("/v1/chat/completions", json=CHAT).json()["choices"][0]["message"]["content"]
        for _ in range(3)
    ]
    assert answers == ["DONE", "second", "DONE"]
    fake.set_scenario({"steps": [{"match": {"turn": 1}, "reply": {"text": "first again"}}]})
    assert (
        client.post("/v1/chat/completions", json=CHAT).json()["choices"][0]["message"]["content"]
        == "first again"
    )
    assert [r.step for r in fake.requests] == [
        "fallback:default",
        "step 0",
        "fallback:default",
        "step 0",
    ]


async def test_async_context_manager() -> None:
    async with FakeModelServer("text") as fake, httpx.AsyncClient(base_url=fake.base_url) as http:
        reply = await http.post("/v1/chat/completions", json=CHAT)
        assert reply.json()["choices"][0]["message"]["content"] == "Hello from the fake model."
        assert isinstance(fake.requests.last(), RequestRecord)
        assert fake.base_url.startswith("http://127.0.0.1:")


def test_fixed_port_and_restart() -> None:
    with FakeModelServer() as first:
        port = first.port
    with FakeModelServer(port=port) as second, httpx.Client(base_url=second.base_url) as http:
        assert http.head("/").status_code == 200


async def test_await_for_does_not_block_the_loop() -> None:
    held = {"default": {"text": "x", "hold": {"seconds": None}}}
    async with FakeModelServer(held) as fake, httpx.AsyncClient(base_url=fake.base_url) as http:
        call = asyncio.create_task(http.post("/v1/chat/completions", json=CHAT))
        view = await fake.requests.await_for(1)
        assert view.last().outcome == "pending"
        fake.release_holds()
        assert (await call).status_code == 200


def test_wait_for_tolerates_an_empty_log(fake: FakeModelServer) -> None:
    def call() -> None:
        with httpx.Client(base_url=fake.base_url) as http:
            http.get("/v1/models")

    worker = threading.Thread(target=call)
    worker.start()
    view = fake.requests.wait_for(lambda log: log.last().endpoint == "models")
    worker.join(10)
    assert view.last().status == 200
    with pytest.raises(TimeoutError):
        fake.requests.wait_for(5, timeout=0.05)
