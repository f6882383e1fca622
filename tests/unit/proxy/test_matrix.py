"""Every inbound × outbound wire pair, streamed and not, on the requests recorded from the real
harnesses: text, reasoning, two parallel tool calls, the follow-up turn with tool results and
signatures, images, HTTP errors and in-stream errors.

The harness side is read by ``_client`` (independent of the proxy's converters); the upstream
side by the fake model server's own request log.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from corral.proxy import ProxyServer
from corral.testing import FakeModelServer

from ._client import follow_up, path_for, read, recorded_bodies, with_stream
from .conftest import TOKEN, UPSTREAMS

INBOUND = ("anthropic", "openai-chat", "openai-responses", "google")
LOGGED = {
    "anthropic": "anthropic",
    "openai-chat": "openai-chat",
    "openai-responses": "openai-responses",
    "google": "gemini",
}
WRITE_TOOL = {
    "anthropic": "Write",
    "openai-responses": "exec_command",
    "openai-chat": "write",
    "google": "write_file",
}
TOOL_STOP = {
    "anthropic": "tool_use",
    "openai-chat": "tool_calls",
    "openai-responses": "completed",
    "google": "STOP",
}
THOUGHT = "Let me think."
SCENARIO: dict[str, Any] = {
    "steps": [
        {
            "name": "tools",
            "match": {"last_is_tool_result": False},
            "reply": {
                "thinking": THOUGHT,
                "text": "Writing two files.",
                "chunks": 3,
                "tool_calls": [
                    {"capability": "write_file", "path": "/tmp/corral-proxy-a.txt", "content": "a"},
                    {"capability": "write_file", "path": "/tmp/corral-proxy-b.txt", "content": "b"},
                ],
                "usage": {"input_tokens": 123, "output_tokens": 45},
            },
        },
        {"name": "done", "match": {"last_is_tool_result": True}, "reply": {"text": "DONE"}},
    ]
}
PAIRS = [
    pytest.param(i, o, s, id=f"{i}->{o}-{'stream' if s else 'json'}")
    for i in INBOUND
    for o in UPSTREAMS
    for s in (False, True)
]


def first_turn(inbound: str) -> dict[str, Any]:
    """The recorded harness's first main request: its history cut after the user's prompt."""
    body = json.loads(json.dumps(recorded_bodies(inbound)[0]))
    key = {
        "anthropic": "messages",
        "openai-chat": "messages",
        "openai-responses": "input",
        "google": "contents",
    }[inbound]
    history = body[key]
    while history and _is_tool_traffic(inbound, history[-1]):
        history.pop()
    return body


def _is_tool_traffic(inbound: str, item: dict[str, Any]) -> bool:
    text = json.dumps(item)
    return any(
        k in text
        for k in (
            "tool_result",
            "tool_use",
            "function_call",
            "functionCall",
            "functionResponse",
            '"tool"',
        )
    )


def post(proxy: ProxyServer, inbound: str, body: dict[str, Any], stream: bool) -> httpx.Response:
    headers = {"authorization": f"Bearer {TOKEN}", "anthropic-version": "2023-06-01"}
    return httpx.post(
        proxy.base_url + path_for(inbound, stream),
        json=with_stream(inbound, body, stream),
        headers=headers,
        timeout=30,
    )


@pytest.mark.parametrize(("inbound", "upstream", "stream"), PAIRS)
def test_tool_turn_and_follow_up(
    inbound: str,
    upstream: str,
    stream: bool,
    fake: FakeModelServer,
    proxies: dict[str, ProxyServer],
) -> None:
    fake.set_scenario(SCENARIO)
    proxy = proxies[upstream]
    body = first_turn(inbound)
    reply = read(inbound, post(proxy, inbound, body, stream), stream)

    assert reply.status == 200 and reply.error is None, reply
    assert reply.text == "Writing two files."
    assert [t for t, _ in reply.thinking] == [THOUGHT]
    assert [name for _, name, _ in reply.calls] == [WRITE_TOOL[inbound]] * 2
    assert len({call_id for call_id, _, _ in reply.calls}) == 2
    assert all(args for _, _, args in reply.calls)
    assert reply.stop == TOOL_STOP[inbound]
    first = fake.requests.last()
    assert first.wire_api == LOGGED[upstream]
    assert first.step == "tools"
    assert first.stream == stream
    assert len(first.tool_names) >= 1 and WRITE_TOOL[inbound] in first.tool_names
    if inbound == "anthropic" and stream and upstream == "anthropic":
        assert reply.usage_at_start == 123  # usage in message_start where the target gives it

    second = read(inbound, post(proxy, inbound, follow_up(inbound, body, reply), stream), stream)
    assert second.status == 200 and second.text == "DONE", second
    record = fake.requests.last()
    assert record.step == "done"
    # Google carries a result as an object ({"output": "ok"}); the others as the text itself.
    expected = '{"output": "ok"}' if upstream == "google" else "ok"
    assert record.tool_results[-2:] == [expected, expected], record.tool_results
    _assert_reasoning_came_back(upstream, record.body)


def _assert_reasoning_came_back(upstream: str, body: dict[str, Any]) -> None:
    """The upstream's own reasoning signature is in the follow-up request, whatever the client."""
    if upstream == "anthropic":
        blocks = [b for m in body["messages"] if m["role"] == "assistant" for b in m["content"]]
        thinking = [b for b in blocks if b["type"] == "thinking"]
        assert thinking == [
            {"type": "thinking", "thinking": THOUGHT, "signature": "fake-signature"}
        ]
        assert blocks.index(thinking[0]) == 0  # before the tool calls, as Anthropic requires
    elif upstream == "openai-responses":
        items = [i for i in body["input"] if i.get("type") == "reasoning"]
        assert len(items) == 1 and str(items[0]["id"]).startswith("rs_fake_"), items
        assert items[0]["summary"] == [{"type": "summary_text", "text": THOUGHT}]
    elif upstream == "openai-chat":
        assistant = [
            m for m in body["messages"] if m["role"] == "assistant" and m.get("tool_calls")
        ]
        assert assistant[-1]["reasoning_content"] == THOUGHT
    else:
        # The fake's Gemini reasoning is unsigned; unsigned thoughts are not sent back to Google.
        parts = [p for c in body["contents"] if c["role"] == "model" for p in c["parts"]]
        assert not any(p.get("thought") for p in parts)
        assert sum("functionCall" in p for p in parts) >= 2


IMAGE = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="


def image_request(inbound: str) -> dict[str, Any]:
    if inbound == "anthropic":
        content = [
            {"type": "text", "text": "what is this?"},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": IMAGE},
            },
        ]
        return {"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": content}]}
    if inbound == "openai-chat":
        content = [
            {"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{IMAGE}"}},
        ]
        return {"model": "m", "messages": [{"role": "user", "content": content}]}
    if inbound == "openai-responses":
        content = [
            {"type": "input_text", "text": "what is this?"},
            {"type": "input_image", "image_url": f"data:image/png;base64,{IMAGE}"},
        ]
        return {"model": "m", "input": [{"type": "message", "role": "user", "content": content}]}
    parts = [{"text": "what is this?"}, {"inlineData": {"mimeType": "image/png", "data": IMAGE}}]
    return {"contents": [{"role": "user", "parts": parts}]}


@pytest.mark.parametrize(("inbound", "upstream", "stream"), [p for p in PAIRS if not p.values[2]])
def test_images_cross(
    inbound: str,
    upstream: str,
    stream: bool,
    fake: FakeModelServer,
    proxies: dict[str, ProxyServer],
) -> None:
    fake.set_scenario({"steps": [{"match": {"kind": "any"}, "reply": {"text": "a pixel"}}]})
    reply = read(inbound, post(proxies[upstream], inbound, image_request(inbound), False), False)
    assert reply.status == 200 and reply.text == "a pixel", reply
    record = fake.requests.last()
    assert record.has_image, record.body
    assert IMAGE in json.dumps(record.body)


ERRORS = {
    # kind → inbound → (status, a fragment of the body that must be there)
    "rate_limit": {
        "anthropic": (429, {"type": "error", "error": {"type": "rate_limit_error"}}),
        "openai-chat": (429, {"error": {"code": "rate_limit_exceeded"}}),
        "openai-responses": (429, {"error": {"code": "rate_limit_exceeded"}}),
        "google": (429, {"error": {"status": "RESOURCE_EXHAUSTED", "code": 429}}),
    },
    "overloaded": {
        "anthropic": (529, {"type": "error", "error": {"type": "overloaded_error"}}),
        "openai-chat": (503, {"error": {"code": "server_is_overloaded"}}),
        "openai-responses": (503, {"error": {"code": "server_is_overloaded"}}),
        "google": (503, {"error": {"status": "UNAVAILABLE", "code": 503}}),
    },
    "server": {
        "anthropic": (500, {"type": "error", "error": {"type": "api_error"}}),
        "openai-chat": (500, {"error": {"code": "server_error"}}),
        "openai-responses": (500, {"error": {"code": "server_error"}}),
        "google": (500, {"error": {"status": "INTERNAL", "code": 500}}),
    },
}


def contains(body: Any, fragment: Any) -> bool:
    if isinstance(fragment, dict):
        return isinstance(body, dict) and all(
            k in body and contains(body[k], v) for k, v in fragment.items()
        )
    return bool(body == fragment)


@pytest.mark.parametrize("kind", list(ERRORS))
@pytest.mark.parametrize(("inbound", "upstream", "stream"), PAIRS)
def test_http_errors_take_the_inbound_shape(
    kind: str,
    inbound: str,
    upstream: str,
    stream: bool,
    fake: FakeModelServer,
    proxies: dict[str, ProxyServer],
) -> None:
    error: dict[str, Any] = {"kind": kind}
    if kind == "rate_limit":
        error["retry_after"] = 7
    fake.set_scenario({"steps": [{"match": {"kind": "any"}, "reply": {"error": error}}]})
    response = post(proxies[upstream], inbound, image_request(inbound), stream)
    status, fragment = ERRORS[kind][inbound]
    assert response.status_code == status, response.text
    assert contains(response.json(), fragment), response.json()
    if kind == "rate_limit":
        assert response.headers["retry-after"] == "7"


STREAM_ERRORS = {
    "anthropic": lambda t: (
        'event: error\ndata: {"type":"error","error":{"type":"overloaded_error"' in t
    ),
    "openai-chat": lambda t: t.rstrip().endswith("}") and '"error":{' in t.rsplit("data: ", 1)[-1],
    "openai-responses": lambda t: "event: response.failed" in t and "response.completed" not in t,
    "google": lambda t: '"status":"UNAVAILABLE"' in t.rsplit("data: ", 1)[-1],
}


@pytest.mark.parametrize(("inbound", "upstream"), [(i, o) for i in INBOUND for o in UPSTREAMS])
def test_in_stream_error_ends_the_client_stream_in_its_own_shape(
    inbound: str, upstream: str, fake: FakeModelServer, proxies: dict[str, ProxyServer]
) -> None:
    fake.set_scenario(
        {
            "steps": [
                {
                    "match": {"kind": "any"},
                    "reply": {
                        "text": "partial answer",
                        "chunks": 4,
                        "error": {"kind": "overloaded", "after_chunks": 2},
                    },
                }
            ]
        }
    )
    response = post(proxies[upstream], inbound, image_request(inbound), True)
    assert response.status_code == 200
    assert STREAM_ERRORS[inbound](response.text), response.text[-600:]


@pytest.mark.parametrize(("inbound", "upstream"), [(i, o) for i in INBOUND for o in UPSTREAMS])
def test_streaming_client_in_front_of_a_non_streaming_upstream(
    inbound: str, upstream: str, fake: FakeModelServer
) -> None:
    """A target that does not stream still gives a streaming harness valid, parallel tool calls."""
    from corral.proxy import ProxySettings

    from .conftest import profile_for

    fake.set_scenario(SCENARIO)
    settings = ProxySettings(
        profile=profile_for(upstream, fake.base_url, stream=False), token=TOKEN, usage_log=""
    )
    with ProxyServer(settings) as proxy:
        reply = read(inbound, post(proxy, inbound, first_turn(inbound), True), True)
    assert reply.status == 200 and reply.error is None, reply
    assert fake.requests.last().stream is False
    assert reply.text == "Writing two files."
    assert [name for _, name, _ in reply.calls] == [WRITE_TOOL[inbound]] * 2
    assert all(args for _, _, args in reply.calls)
    assert reply.stop == TOOL_STOP[inbound]
