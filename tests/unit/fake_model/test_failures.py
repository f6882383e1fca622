"""Errors, mid-stream disconnects and holds, on every wire API."""

from __future__ import annotations

import threading
from typing import Any

import httpx
import pytest

from corral.testing import FakeModelServer

from ._helpers import CLAUDE_TOOLS, anthropic_tools, sse_events

MESSAGES = [{"role": "user", "content": "hi"}]
TOOLS = anthropic_tools(CLAUDE_TOOLS)

REQUESTS: dict[str, tuple[str, dict[str, Any]]] = {
    "anthropic": (
        "/v1/messages",
        {"model": "m", "stream": True, "messages": MESSAGES, "tools": TOOLS},
    ),
    "openai-chat": (
        "/v1/chat/completions",
        {
            "model": "m",
            "stream": True,
            "messages": MESSAGES,
            "tools": [{"type": "function", "function": {"name": "bash"}}],
        },
    ),
    "openai-responses": (
        "/v1/responses",
        {
            "model": "m",
            "stream": True,
            "input": "hi",
            "tools": [{"type": "function", "name": "shell"}],
        },
    ),
    "gemini": (
        "/v1beta/models/m:streamGenerateContent?alt=sse",
        {
            "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "tools": [{"functionDeclarations": [{"name": "run_shell_command"}]}],
        },
    ),
}


def error_type(api: str, body: dict[str, Any]) -> str:
    if api == "anthropic":
        assert body["type"] == "error"
        return str(body["error"]["type"])
    if api == "gemini":
        return str(body["error"]["status"])
    return str(body["error"]["code"])


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        (
            "rate_limit",
            {
                "anthropic": (429, "rate_limit_error"),
                "openai-chat": (429, "rate_limit_exceeded"),
                "openai-responses": (429, "rate_limit_exceeded"),
                "gemini": (429, "RESOURCE_EXHAUSTED"),
            },
        ),
        (
            "server",
            {
                "anthropic": (500, "api_error"),
                "openai-chat": (500, "server_error"),
                "openai-responses": (500, "server_error"),
                "gemini": (500, "INTERNAL"),
            },
        ),
        (
            "overloaded",
            {
                "anthropic": (529, "overloaded_error"),
                "openai-chat": (503, "server_is_overloaded"),
                "openai-responses": (503, "server_is_overloaded"),
                "gemini": (503, "UNAVAILABLE"),
            },
        ),
    ],
)
def test_errors_in_each_api_shape(
    fake: FakeModelServer, client: httpx.Client, kind: str, expected: dict[str, tuple[int, str]]
) -> None:
    for api, (path, body) in REQUESTS.items():
        fake.set_scenario(
            {"steps": [{"times": 1, "reply": {"error": {"kind": kind, "retry_after": 2}}}]}
        )
        reply = client.post(path, json=body)
        assert (reply.status_code, error_type(api, reply.json())) == expected[api], api
        assert reply.headers["retry-after"] == "2"
        # times: 1 → the retry succeeds.
        assert client.post(path, json=body).status_code == 200


def test_builtin_error_429_scenario(fake: FakeModelServer, client: httpx.Client) -> None:
    fake.set_scenario("error-429")
    path, body = REQUESTS["anthropic"]
    first = client.post(path, json=body)
    assert first.status_code == 429
    assert first.headers["retry-after"] == "1"
    second = sse_events(client.post(path, json=body).text)
    assert (
        "".join(d["delta"].get("text", "") for e, d in second if e == "content_block_delta")
        == "DONE"
    )
    assert [r.status for r in fake.requests] == [429, 200]


@pytest.mark.parametrize("api", list(REQUESTS))
def test_mid_stream_disconnect(fake: FakeModelServer, client: httpx.Client, api: str) -> None:
    fake.set_scenario(
        {"default": {"text": "one two three four", "chunks": 4, "disconnect_after": 2}}
    )
    path, body = REQUESTS[api]
    received: list[bytes] = []

    def read_all() -> None:
        with client.stream("POST", path, json=body) as reply:
            assert reply.status_code == 200
            received.extend(reply.iter_raw())

    with pytest.raises(httpx.RemoteProtocolError):
        read_all()
    assert b"data:" in b"".join(received)
    record = fake.requests.wait_for(lambda log: log.last().outcome != "pending").last()
    assert record.outcome == "server-disconnected"


def test_hold_until_released(fake: FakeModelServer, client: httpx.Client) -> None:
    fake.set_scenario({"default": {"text": "late", "hold": {"seconds": None}}})
    path, body = REQUESTS["openai-chat"]
    result: dict[str, Any] = {}

    def call() -> None:
        result["reply"] = client.post(path, json=body)

    worker = threading.Thread(target=call)
    worker.start()
    fake.requests.wait_for(1)
    assert fake.requests.last().outcome == "pending"
    fake.release_holds()
    worker.join(10)
    assert result["reply"].status_code == 200
    # Marked complete before the last byte goes out: no wait needed once the reply is in.
    assert fake.requests.last().outcome == "complete"


def test_hold_ends_when_client_disconnects(fake: FakeModelServer) -> None:
    fake.set_scenario(
        {"default": {"text": "partial", "hold": {"seconds": None, "after_chunks": 1}}}
    )
    path, body = REQUESTS["anthropic"]
    with (
        httpx.Client(base_url=fake.base_url, timeout=10) as http,
        http.stream("POST", path, json=body) as reply,
    ):
        first = next(reply.iter_raw())
        assert b"message_start" in first
    # Leaving the block closes the connection while the server holds.
    record = fake.requests.wait_for(lambda log: log.last().outcome != "pending").last()
    assert record.outcome == "client-disconnected"


def test_chunk_delay_is_interruptible(fake: FakeModelServer) -> None:
    fake.set_scenario("slow-text")
    path, body = REQUESTS["openai-chat"]
    with (
        httpx.Client(base_url=fake.base_url, timeout=10) as http,
        http.stream("POST", path, json=body) as reply,
    ):
        lines = reply.iter_lines()
        assert next(lines).startswith("data:")
        under_way = fake.requests.wait_for(lambda log: log.last().frames_sent >= 2)
        assert under_way.last().outcome == "pending"
    record = fake.requests.wait_for(lambda log: log.last().outcome != "pending", timeout=5).last()
    assert record.outcome == "client-disconnected"


@pytest.mark.parametrize(
    ("api", "expected"),
    [
        ("anthropic", ("error", "overloaded_error")),
        ("openai-chat", (None, "server_is_overloaded")),
        ("openai-responses", ("response.failed", "server_is_overloaded")),
        ("gemini", (None, "UNAVAILABLE")),
    ],
)
def test_error_inside_a_started_stream(
    fake: FakeModelServer, client: httpx.Client, api: str, expected: tuple[str | None, str]
) -> None:
    fake.set_scenario(
        {
            "default": {
                "text": "abc",
                "chunks": 3,
                "error": {"kind": "overloaded", "after_chunks": 2},
            }
        }
    )
    path, body = REQUESTS[api]
    reply = client.post(path, json=body)
    assert reply.status_code == 200
    events = sse_events(reply.text)
    assert len(events) == 3
    event, data = events[-1]
    if api == "anthropic":
        code = data["error"]["type"]
    elif api == "openai-responses":
        code = data["response"]["error"]["code"]
    elif api == "gemini":
        code = data["error"]["status"]
    else:
        code = data["error"]["code"]
    assert (event, code) == expected


def test_unreadable_request_is_logged_as_400(fake: FakeModelServer, client: httpx.Client) -> None:
    assert client.post("/v1/messages", json={"messages": "not a list"}).status_code == 400
    assert client.post("/v1/chat/completions", content=b"not json").status_code == 400
    assert [r.endpoint for r in fake.requests] == ["bad-request", "bad-request"]
    assert fake.requests[1].body == "not json"
