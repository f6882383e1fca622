"""Anthropic's LLM-gateway contract for Claude Code, item by item, plus the proxy's own hygiene
(token forms, ``/health``, models listings, unknown fields, garbage bodies)."""

from __future__ import annotations

import json
import logging

import httpx
import pytest

from corral.proxy import ProxyServer
from corral.testing import FakeModelServer

from .conftest import TOKEN

ANY = {
    "steps": [
        {
            "match": {"kind": "any"},
            "reply": {"text": "hello", "usage": {"input_tokens": 42, "output_tokens": 3}},
        }
    ]
}
MESSAGE = {
    "model": "claude-sonnet",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "hi"}],
}
AUTH = {"x-api-key": TOKEN}


def test_checklist_messages_endpoint_with_beta_query(
    fake: FakeModelServer, proxies: dict[str, ProxyServer]
) -> None:
    fake.set_scenario(ANY)
    for proxy in proxies.values():
        response = httpx.post(proxy.base_url + "/v1/messages?beta=true", json=MESSAGE, headers=AUTH)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["type"] == "message" and body["role"] == "assistant"
        assert body["content"] == [{"type": "text", "text": "hello"}]
        assert body["usage"]["input_tokens"] == 42 and body["stop_reason"] == "end_turn"


def test_checklist_stream_event_order_and_usage_in_message_start(
    fake: FakeModelServer, proxies: dict[str, ProxyServer]
) -> None:
    fake.set_scenario(ANY)
    response = httpx.post(
        proxies["anthropic"].base_url + "/v1/messages",
        json=MESSAGE | {"stream": True},
        headers=AUTH,
    )
    assert response.headers["content-type"].startswith("text/event-stream")
    events = [
        b.split("\n", 1)[0].removeprefix("event: ") for b in response.text.strip().split("\n\n")
    ]
    assert events == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    start = json.loads(response.text.split("\n\n")[0].split("data: ", 1)[1])
    assert start["message"]["usage"]["input_tokens"] == 42


def test_checklist_count_tokens_is_served(proxies: dict[str, ProxyServer]) -> None:
    for proxy in proxies.values():
        response = httpx.post(
            proxy.base_url + "/v1/messages/count_tokens", json=MESSAGE, headers=AUTH
        )
        assert response.status_code == 200
        assert response.json()["input_tokens"] > 0


def test_checklist_anthropic_beta_and_version_forwarded_unchanged(
    fake: FakeModelServer, proxies: dict[str, ProxyServer]
) -> None:
    fake.set_scenario(ANY)
    headers = AUTH | {
        "anthropic-beta": "interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14",
        "anthropic-version": "2023-06-01",
    }
    assert (
        httpx.post(
            proxies["anthropic"].base_url + "/v1/messages", json=MESSAGE, headers=headers
        ).status_code
        == 200
    )
    seen = fake.requests.last().headers
    assert seen["anthropic-beta"] == headers["anthropic-beta"]
    assert seen["anthropic-version"] == "2023-06-01"
    # Not an Anthropic upstream: the Anthropic-only headers stay behind.
    assert (
        httpx.post(
            proxies["openai-chat"].base_url + "/v1/messages", json=MESSAGE, headers=headers
        ).status_code
        == 200
    )
    assert "anthropic-beta" not in fake.requests.last().headers


def test_checklist_both_key_forms_are_accepted_and_a_wrong_one_refused(
    proxies: dict[str, ProxyServer],
) -> None:
    url = proxies["anthropic"].base_url
    for headers in (
        {"x-api-key": TOKEN},
        {"authorization": f"Bearer {TOKEN}"},
        {"x-goog-api-key": TOKEN},
    ):
        assert (
            httpx.post(url + "/v1/messages/count_tokens", json=MESSAGE, headers=headers).status_code
            == 200
        )
    refused = httpx.post(url + "/v1/messages", json=MESSAGE, headers={"x-api-key": "wrong"})
    assert refused.status_code == 401
    assert refused.json()["error"]["type"] == "authentication_error"
    google = httpx.post(url + "/v1beta/models/m:generateContent", json={"contents": []})
    assert google.status_code == 401 and google.json()["error"]["status"] == "UNAUTHENTICATED"


def test_health_is_open_and_models_listings_answer_each_shape(
    proxies: dict[str, ProxyServer],
) -> None:
    url = proxies["openai-chat"].base_url
    assert httpx.get(url + "/health").json() == {"status": "ok"}
    assert httpx.get(url + "/v1/models").status_code == 401
    listing = httpx.get(url + "/v1/models", headers=AUTH).json()
    assert listing["object"] == "list" and listing["data"][0]["id"] == "fake-model"
    google = httpx.get(url + "/v1beta/models", headers={"x-goog-api-key": TOKEN}).json()
    assert google["models"][0]["name"] == "models/fake-model"
    one = httpx.get(url + "/v1beta/models/fake-model", headers={"x-goog-api-key": TOKEN}).json()
    assert "generateContent" in one["supportedGenerationMethods"]


def test_unknown_fields_are_dropped_with_a_debug_log_never_a_400(
    fake: FakeModelServer, proxies: dict[str, ProxyServer], caplog: pytest.LogCaptureFixture
) -> None:
    fake.set_scenario(ANY)
    body = MESSAGE | {"context_management": {"edits": []}, "container": "x", "mcp_servers": []}
    with caplog.at_level(logging.DEBUG, logger="corral.proxy"):
        response = httpx.post(
            proxies["openai-chat"].base_url + "/v1/messages", json=body, headers=AUTH
        )
    assert response.status_code == 200
    sent = fake.requests.last().body
    assert not {"context_management", "container", "mcp_servers"} & set(sent)
    assert any(
        "container" in r.getMessage() and "context_management" in r.getMessage()
        for r in caplog.records
    )


@pytest.mark.parametrize(
    "raw",
    [
        b"not json",
        b"[1,2]",
        b'{"messages": "nope"}',
        b'{"messages": [{"role": "user", "content": 5}]}',
        b'{"model": {"a": 1}, "tools": [1, {"name": null}]}',
    ],
)
@pytest.mark.parametrize(
    "path",
    ["/v1/messages", "/v1/chat/completions", "/v1/responses", "/v1beta/models/m:generateContent"],
)
def test_garbage_bodies_never_crash(
    raw: bytes, path: str, fake: FakeModelServer, proxies: dict[str, ProxyServer]
) -> None:
    fake.set_scenario(ANY)
    response = httpx.post(
        proxies["anthropic"].base_url + path,
        content=raw,
        headers={"authorization": f"Bearer {TOKEN}"},
    )
    assert response.status_code in (200, 400), response.text
    assert isinstance(response.json(), dict | list)
