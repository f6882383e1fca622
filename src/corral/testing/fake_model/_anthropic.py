"""Anthropic Messages: ``POST /v1/messages`` (SSE and JSON) and ``/v1/messages/count_tokens``."""

from __future__ import annotations

import json
from typing import Any

from ._asgi import Frame
from ._plan import Plan
from ._scenario import ErrorSpec
from ._types import Message, ParsedRequest, ToolCall, ToolInfo
from ._wire import error_message, error_status, flatten, halves, sse, text_deltas

_ERROR_TYPES = {
    "rate_limit": "rate_limit_error",
    "server": "api_error",
    "overloaded": "overloaded_error",
    "bad_request": "invalid_request_error",
}


def parse(body: dict[str, Any]) -> ParsedRequest:
    system, _ = flatten(body.get("system"))
    messages: list[Message] = []
    for raw in body.get("messages") or []:
        messages.extend(_parse_message(raw))
    tools = [
        ToolInfo(name=str(t["name"]), schema=t.get("input_schema") or {})
        for t in body.get("tools") or []
        if isinstance(t, dict) and "name" in t
    ]
    json_schema: dict[str, Any] | None = None
    fmt = (body.get("output_config") or {}).get("format") or body.get("output_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        json_schema = fmt.get("schema") or {}
    return ParsedRequest(
        wire_api="anthropic",
        model=str(body.get("model", "")),
        stream=bool(body.get("stream")),
        system=system,
        messages=messages,
        tools=tools,
        json_schema=json_schema,
    )


def _parse_message(raw: dict[str, Any]) -> list[Message]:
    role = raw.get("role", "user")
    content = raw.get("content")
    if role == "system":
        return [Message(role="system", text=flatten(content)[0])]
    if isinstance(content, str):
        return [Message(role="assistant" if role == "assistant" else "user", text=content)]
    texts: list[str] = []
    image = False
    calls: list[ToolCall] = []
    results: list[Message] = []
    for block in content or []:
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "image":
            image = True
        elif kind == "tool_use":
            calls.append(
                ToolCall(
                    id=str(block.get("id")),
                    name=str(block.get("name")),
                    arguments=block.get("input"),
                )
            )
        elif kind == "tool_result":
            text, has_image = flatten(block.get("content"))
            results.append(
                Message(
                    role="tool",
                    text=text,
                    has_image=has_image,
                    tool_call_id=str(block.get("tool_use_id")),
                )
            )
    text = "\n".join(texts)
    if role == "assistant":
        return [Message(role="assistant", text=text, tool_calls=calls)]
    out: list[Message] = []
    # Text next to tool results (system reminders) goes first so the turn still ends in the results.
    if text or image or not results:
        out.append(Message(role="user", text=text, has_image=image))
    return out + results


def _blocks(plan: Plan) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if plan.thinking:
        blocks.append(
            {"type": "thinking", "thinking": plan.thinking, "signature": "fake-signature"}
        )
    if plan.text:
        blocks.append({"type": "text", "text": plan.text})
    for call in plan.tool_calls:
        blocks.append(
            {
                "type": "tool_use",
                "id": f"toolu_fake_{call.id}",
                "name": call.name,
                "input": call.arguments if isinstance(call.arguments, dict) else {},
            }
        )
    return blocks


def _usage(plan: Plan) -> dict[str, int]:
    return {
        "input_tokens": plan.usage.input_tokens,
        "output_tokens": plan.usage.output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def render_json(plan: Plan, request: ParsedRequest) -> dict[str, Any]:
    return {
        "id": f"msg_fake_{plan.serial}",
        "type": "message",
        "role": "assistant",
        "model": request.model,
        "content": _blocks(plan),
        "stop_reason": "tool_use" if plan.stop_for_tools else "end_turn",
        "stop_sequence": None,
        "usage": _usage(plan),
    }


def render_stream(plan: Plan, request: ParsedRequest) -> list[Frame]:
    message = render_json(plan, request) | {"content": [], "stop_reason": None}
    message["usage"] = _usage(plan) | {"output_tokens": 1}
    frames = [sse({"type": "message_start", "message": message}, "message_start")]
    index = 0

    def block(start: dict[str, Any], deltas: list[tuple[dict[str, Any], float]]) -> None:
        nonlocal index
        frames.append(
            sse(
                {"type": "content_block_start", "index": index, "content_block": start},
                "content_block_start",
            )
        )
        for delta, delay in deltas:
            frames.append(
                sse(
                    {"type": "content_block_delta", "index": index, "delta": delta},
                    "content_block_delta",
                    delay,
                )
            )
        frames.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        index += 1

    if plan.thinking:
        block(
            {"type": "thinking", "thinking": "", "signature": ""},
            [
                ({"type": "thinking_delta", "thinking": plan.thinking}, 0.0),
                ({"type": "signature_delta", "signature": "fake-signature"}, 0.0),
            ],
        )
    if plan.text:
        block(
            {"type": "text", "text": ""},
            [({"type": "text_delta", "text": chunk}, delay) for chunk, delay in text_deltas(plan)],
        )
    for call in plan.tool_calls:
        arguments = json.dumps(call.arguments if isinstance(call.arguments, dict) else {})
        block(
            {"type": "tool_use", "id": f"toolu_fake_{call.id}", "name": call.name, "input": {}},
            [
                ({"type": "input_json_delta", "partial_json": part}, 0.0)
                for part in halves(arguments)
            ],
        )
    frames.append(
        sse(
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": "tool_use" if plan.stop_for_tools else "end_turn",
                    "stop_sequence": None,
                },
                "usage": {"output_tokens": plan.usage.output_tokens},
            },
            "message_delta",
        )
    )
    frames.append(sse({"type": "message_stop"}, "message_stop"))
    return frames


def render_error(spec: ErrorSpec) -> tuple[int, dict[str, Any]]:
    status = error_status(spec, overloaded_status=529)
    return status, {
        "type": "error",
        "error": {"type": _ERROR_TYPES[spec.kind], "message": error_message(spec)},
    }


def count_tokens(body: dict[str, Any]) -> dict[str, Any]:
    return {"input_tokens": 10}


def render_stream_error(spec: ErrorSpec, plan: Plan) -> Frame:
    """The ``event: error`` Anthropic sends when a stream fails after it started."""
    return sse(render_error(spec)[1], "error")
