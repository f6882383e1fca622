"""Streamed usage: what each upstream can report and when, and where the proxy puts it.

Anthropic knows the input tokens at ``message_start``; Chat Completions only in a last chunk,
and only when the request sets ``stream_options.include_usage`` (the scripted model server
behaves as the real API does); Responses at ``response.completed``; Gemini on the chunk that
carries ``usageMetadata``. An Anthropic client therefore gets the input tokens in
``message_start`` from an Anthropic upstream, and in ``message_delta`` at the end otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from corral.proxy import ProxyServer, ProxySettings, _chat, _google
from corral.proxy import _ir as ir
from corral.testing import FakeModelServer

from ._client import path_for, sse
from .conftest import TOKEN, UPSTREAMS, profile_for

USAGE = {"input_tokens": 42, "output_tokens": 3}
SCENARIO = {"steps": [{"match": {"kind": "any"}, "reply": {"text": "hello", "usage": USAGE}}]}
AUTH = {"x-api-key": TOKEN, "authorization": f"Bearer {TOKEN}", "x-goog-api-key": TOKEN}
PROMPT = "hi"


def body_for(wire: str, stream: bool) -> dict[str, Any]:
    if wire == "anthropic":
        return {
            "model": "m",
            "max_tokens": 64,
            "stream": stream,
            "messages": [{"role": "user", "content": PROMPT}],
        }
    if wire == "openai-chat":
        return {"model": "m", "stream": stream, "messages": [{"role": "user", "content": PROMPT}]}
    if wire == "openai-responses":
        return {"model": "m", "stream": stream, "input": PROMPT}
    return {"contents": [{"role": "user", "parts": [{"text": PROMPT}]}]}


def post(proxy: ProxyServer, wire: str, stream: bool) -> list[tuple[str | None, Any]]:
    response = httpx.post(
        proxy.base_url + path_for(wire, stream), json=body_for(wire, stream), headers=AUTH
    )
    assert response.status_code == 200, response.text
    return sse(response.text)


# what an Anthropic client sees in message_start, per upstream: Gemini's answer to "hi" is one
# chunk, and that chunk carries usageMetadata, so its start knows the input tokens too
AT_START = {"anthropic": 42, "openai-chat": 0, "openai-responses": 0, "google": 42}


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_anthropic_client_gets_input_tokens_at_start_or_at_the_end(
    fake: FakeModelServer, proxies: dict[str, ProxyServer], upstream: str
) -> None:
    fake.set_scenario(SCENARIO)
    events = dict(post(proxies[upstream], "anthropic", stream=True))
    start = events["message_start"]["message"]["usage"]
    delta = events["message_delta"]["usage"]
    assert start["input_tokens"] == AT_START[upstream]
    # wherever message_start could not know them, the end reports them
    assert delta["input_tokens"] == 42 and delta["output_tokens"] == 3


def test_chat_upstreams_are_asked_for_stream_usage(
    fake: FakeModelServer, proxies: dict[str, ProxyServer]
) -> None:
    fake.set_scenario(SCENARIO)
    for client in ("anthropic", "openai-responses", "google"):  # none of them asks for it
        post(proxies["openai-chat"], client, stream=True)
        post(proxies["openai-chat"], client, stream=False)
    calls = fake.requests.model_calls()
    streamed = [c.body for c in calls if c.stream]
    whole = [c.body for c in calls if not c.stream]
    assert len(streamed) == 3 and len(whole) == 3
    assert all(b["stream_options"] == {"include_usage": True} for b in streamed)
    assert all("stream_options" not in b for b in whole)  # the API refuses it without stream


def _final_input_tokens(wire: str, events: list[tuple[str | None, Any]]) -> int:
    datas = [d for _, d in events if isinstance(d, dict)]
    if wire == "openai-responses":
        done = next(d for d in datas if d.get("type") == "response.completed")
        return int(done["response"]["usage"]["input_tokens"])
    if wire == "openai-chat":
        last = [d for d in datas if d.get("usage")][-1]
        assert last["choices"] == []  # the usage chunk, as OpenAI sends it
        return int(last["usage"]["prompt_tokens"])
    return int(datas[-1]["usageMetadata"]["promptTokenCount"])


@pytest.mark.parametrize("client", ["openai-chat", "openai-responses", "google"])
def test_every_client_gets_a_chat_upstreams_input_tokens_at_the_end(
    fake: FakeModelServer, proxies: dict[str, ProxyServer], client: str
) -> None:
    fake.set_scenario(SCENARIO)
    assert _final_input_tokens(client, post(proxies["openai-chat"], client, stream=True)) == 42


def test_the_usage_record_has_a_chat_streams_input_tokens(
    fake: FakeModelServer, tmp_path: Path
) -> None:
    fake.set_scenario(SCENARIO)
    log = tmp_path / "usage.jsonl"
    settings = ProxySettings(
        profile=profile_for("openai-chat", fake.base_url),
        token=TOKEN,
        usage_log=str(log),
        max_retry_wait=0,
    )
    proxy = ProxyServer(settings).start()
    try:
        post(proxy, "anthropic", stream=True)
    finally:
        proxy.stop()
    (line,) = log.read_text().splitlines()
    record = json.loads(line)
    assert record["stream"] is True and record["target_wire"] == "openai-chat"
    assert (record["input_tokens"], record["output_tokens"]) == (42, 3)


def _starts(events: list[ir.Event]) -> list[ir.Start]:
    return [e for e in events if isinstance(e, ir.Start)]


def test_a_chat_server_that_reports_usage_on_every_chunk_fills_start() -> None:
    decoder = _chat.Decoder()
    first = {
        "id": "c1",
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": "he"}}],
        "usage": {"prompt_tokens": 17, "completion_tokens": 1},
    }
    (start,) = _starts(decoder.feed("", json.dumps(first)))
    assert start.usage is not None and start.usage.input_tokens == 17
    # OpenAI's own shape: usage null on every chunk but the last
    plain = _chat.Decoder()
    (start,) = _starts(plain.feed("", json.dumps(first | {"usage": None})))
    assert start.usage is not None and start.usage.input_tokens == 0


def test_a_gemini_first_chunk_with_usage_metadata_fills_start() -> None:
    decoder = _google.Decoder()
    chunk = {
        "candidates": [{"content": {"role": "model", "parts": [{"text": "he"}]}, "index": 0}],
        "usageMetadata": {"promptTokenCount": 23, "candidatesTokenCount": 1},
        "responseId": "r1",
    }
    (start,) = _starts(decoder.feed("", json.dumps(chunk)))
    assert start.usage is not None and start.usage.input_tokens == 23
