"""What a harness sees: reading each wire API's answer, written from the public API shapes and
independent of the proxy's converters (so a converter bug cannot hide behind itself).

``read(wire, response)`` returns a :class:`Reply`; ``follow_up(wire, body, reply)`` builds the
harness's next request (the answer appended, every tool call answered) as that harness would.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

FIXTURES = Path(__file__).parents[1] / "fake_model" / "fixtures" / "requests"
PATHS = {
    "anthropic": "/v1/messages",
    "openai-chat": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "google": "/v1beta/models/fake-model:generateContent",
}
# One recorded harness per inbound API (the fake model server's request recordings).
RECORDED = {
    "anthropic": "claude-2.1.197",
    "openai-responses": "codex-0.171.0",
    "openai-chat": "opencode-1.18.33",
    "google": "gemini-0.61.0",
}


def recorded_bodies(wire: str) -> list[dict[str, Any]]:
    """The recorded main requests (with tools) of the harness speaking ``wire``."""
    lines = (FIXTURES / f"{RECORDED[wire]}.jsonl").read_text().splitlines()
    bodies = [json.loads(line)["body"] for line in lines]
    return [b for b in bodies if b.get("tools")]


def path_for(wire: str, stream: bool) -> str:
    if wire == "google" and stream:
        return "/v1beta/models/fake-model:streamGenerateContent?alt=sse"
    return PATHS[wire]


def with_stream(wire: str, body: dict[str, Any], stream: bool) -> dict[str, Any]:
    if wire == "google":
        return dict(body)
    out = dict(body) | {"stream": stream}
    if wire == "openai-chat" and stream:
        out["stream_options"] = {"include_usage": True}
    return out


@dataclass
class Reply:
    status: int
    text: str = ""
    thinking: list[tuple[str, str | None]] = field(default_factory=list)
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    stop: str | None = None
    error: Any = None
    usage_at_start: int | None = None
    """Input tokens reported before any content (Anthropic ``message_start``)."""
    raw_items: list[dict[str, Any]] = field(default_factory=list)
    """Responses output items / Anthropic content blocks, as the harness would keep them."""


def sse(text: str) -> list[tuple[str | None, Any]]:
    out: list[tuple[str | None, Any]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        event, data = None, []
        for line in block.split("\n"):
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
        if data:
            payload = "\n".join(data)
            out.append((event, payload if payload == "[DONE]" else json.loads(payload)))
    return out


def read(wire: str, response: httpx.Response, stream: bool) -> Reply:
    reply = Reply(response.status_code)
    if response.status_code != 200:
        reply.error = response.json()
        return reply
    if not stream:
        return _read_json(wire, response.json(), reply)
    return {
        "anthropic": _anthropic,
        "openai-chat": _chat,
        "openai-responses": _responses,
        "google": _google,
    }[wire](sse(response.text), reply)


def _read_json(wire: str, body: Any, reply: Reply) -> Reply:
    if wire == "anthropic":
        reply.raw_items = body["content"]
        for block in body["content"]:
            if block["type"] == "text":
                reply.text += block["text"]
            elif block["type"] == "thinking":
                reply.thinking.append((block["thinking"], block.get("signature")))
            elif block["type"] == "tool_use":
                reply.calls.append((block["id"], block["name"], block["input"]))
        reply.stop = body["stop_reason"]
    elif wire == "openai-chat":
        choice = body["choices"][0]
        message = choice["message"]
        reply.text = message.get("content") or ""
        if message.get("reasoning_content"):
            reply.thinking.append(
                (message["reasoning_content"], message.get("reasoning_signature"))
            )
        for call in message.get("tool_calls") or []:
            reply.calls.append(
                (call["id"], call["function"]["name"], json.loads(call["function"]["arguments"]))
            )
        reply.stop = choice["finish_reason"]
    elif wire == "openai-responses":
        _responses_items(body["output"], reply)
        reply.stop = body["status"]
    else:
        _google_chunk(body, reply)
    return reply


def _anthropic(events: list[tuple[str | None, Any]], reply: Reply) -> Reply:
    blocks: dict[int, dict[str, Any]] = {}
    for event, data in events:
        assert event == data["type"], (event, data)
        if event == "message_start":
            reply.usage_at_start = data["message"]["usage"]["input_tokens"]
        elif event == "content_block_start":
            blocks[data["index"]] = dict(data["content_block"]) | {"_json": ""}
        elif event == "content_block_delta":
            block, delta = blocks[data["index"]], data["delta"]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            elif delta["type"] == "thinking_delta":
                block["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                block["signature"] = delta["signature"]
            elif delta["type"] == "input_json_delta":
                block["_json"] += delta["partial_json"]
        elif event == "message_delta":
            reply.stop = data["delta"]["stop_reason"]
        elif event == "error":
            reply.error = data
    for index in sorted(blocks):
        block = blocks[index]
        raw = block.pop("_json")
        if block["type"] == "tool_use":
            block["input"] = json.loads(raw) if raw else {}
        reply.raw_items.append(block)
    return (
        _read_json("anthropic", {"content": reply.raw_items, "stop_reason": reply.stop}, reply)
        if not reply.error
        else reply
    )


def _chat(events: list[tuple[str | None, Any]], reply: Reply) -> Reply:
    calls: dict[int, dict[str, str]] = {}
    assert (events and events[-1][1] == "[DONE]") or any(
        "error" in d for _, d in events if isinstance(d, dict)
    )
    for _, data in events:
        if data == "[DONE]":
            continue
        if "error" in data:
            reply.error = data
            continue
        for choice in data.get("choices") or []:
            delta = choice.get("delta") or {}
            reply.text += delta.get("content") or ""
            if delta.get("reasoning_content"):
                reply.thinking.append((delta["reasoning_content"], None))
            if delta.get("reasoning_signature") and reply.thinking:
                reply.thinking[-1] = (reply.thinking[-1][0], delta["reasoning_signature"])
            for call in delta.get("tool_calls") or []:
                slot = calls.setdefault(call["index"], {"id": "", "name": "", "arguments": ""})
                slot["id"] = call.get("id") or slot["id"]
                fn = call.get("function") or {}
                slot["name"] = fn.get("name") or slot["name"]
                slot["arguments"] += fn.get("arguments") or ""
            if choice.get("finish_reason"):
                reply.stop = choice["finish_reason"]
    for index in sorted(calls):
        c = calls[index]
        reply.calls.append((c["id"], c["name"], json.loads(c["arguments"] or "{}")))
    return reply


def _responses_items(items: list[dict[str, Any]], reply: Reply) -> None:
    reply.raw_items = items
    for item in items:
        if item["type"] == "message":
            reply.text += "".join(p["text"] for p in item["content"] if p["type"] == "output_text")
        elif item["type"] == "reasoning":
            text = "".join(s["text"] for s in item.get("summary") or [])
            reply.thinking.append((text, item.get("encrypted_content") or item["id"]))
        elif item["type"] == "function_call":
            reply.calls.append((item["call_id"], item["name"], json.loads(item["arguments"])))


def _responses(events: list[tuple[str | None, Any]], reply: Reply) -> Reply:
    done: list[dict[str, Any]] = []
    for event, data in events:
        assert event == data["type"], (event, data)
        if event == "response.output_item.done":
            done.append(data["item"])
        elif event == "response.completed":
            reply.stop = data["response"]["status"]
            assert data["response"]["output"] == done
        elif event == "response.failed":
            reply.error = data
    _responses_items(done, reply)
    return reply


def _google_chunk(body: dict[str, Any], reply: Reply) -> None:
    if "error" in body:
        reply.error = body
        return
    candidate = body["candidates"][0]
    for part in candidate["content"].get("parts") or []:
        if part.get("thought"):
            if part.get("text"):
                reply.thinking.append((part["text"], part.get("thoughtSignature")))
            elif part.get("thoughtSignature") and reply.thinking:
                reply.thinking[-1] = (reply.thinking[-1][0], part["thoughtSignature"])
        elif "functionCall" in part:
            call = part["functionCall"]
            reply.calls.append(
                (call.get("id") or call["name"], call["name"], call.get("args") or {})
            )
        elif "text" in part:
            reply.text += part["text"]
    if candidate.get("finishReason"):
        reply.stop = candidate["finishReason"]


def _google(events: list[tuple[str | None, Any]], reply: Reply) -> Reply:
    for _, data in events:
        _google_chunk(data, reply)
    return reply


def follow_up(wire: str, body: dict[str, Any], reply: Reply, result: str = "ok") -> dict[str, Any]:
    """The harness's next request: its answer appended and every tool call answered."""
    body = json.loads(json.dumps(body))
    if wire == "anthropic":
        body["messages"] += [
            {"role": "assistant", "content": reply.raw_items},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": i, "content": result}
                    for i, _, _ in reply.calls
                ],
            },
        ]
    elif wire == "openai-chat":
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.thinking:
            message["reasoning_content"] = reply.thinking[0][0]
            if reply.thinking[0][1]:
                message["reasoning_signature"] = reply.thinking[0][1]
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, n, a in reply.calls
        ]
        body["messages"] += [message] + [
            {"role": "tool", "tool_call_id": i, "content": result} for i, _, _ in reply.calls
        ]
    elif wire == "openai-responses":
        body["input"] += reply.raw_items + [
            {"type": "function_call_output", "call_id": i, "output": result}
            for i, _, _ in reply.calls
        ]
    else:
        parts: list[dict[str, Any]] = []
        for text, signature in reply.thinking:
            parts.append(
                {"text": text, "thought": True}
                | ({"thoughtSignature": signature} if signature else {})
            )
        parts += [{"functionCall": {"id": i, "name": n, "args": a}} for i, n, a in reply.calls]
        body["contents"] += [
            {"role": "model", "parts": parts},
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"id": i, "name": n, "response": {"output": result}}}
                    for i, n, _ in reply.calls
                ],
            },
        ]
    return body
