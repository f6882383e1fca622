"""OpenAI Chat Completions: ``POST /v1/chat/completions`` (SSE and JSON).

Used by opencode (``@ai-sdk/openai-compatible``), pi, qwen and hermes. A usage chunk is streamed
only when the request sets ``stream_options.include_usage``, as the real API does.
"""

from __future__ import annotations

from typing import Any

from ._asgi import Frame
from ._plan import Plan
from ._responses import render_error as _openai_error
from ._scenario import ErrorSpec
from ._types import Message, ParsedRequest, ToolCall, ToolInfo
from ._wire import flatten, halves, sse, text_deltas


def parse(body: dict[str, Any]) -> ParsedRequest:
    messages: list[Message] = []
    for raw in body.get("messages") or []:
        role = raw.get("role", "user")
        text, image = flatten(raw.get("content"))
        if role in ("system", "developer"):
            messages.append(Message(role="system", text=text))
        elif role in ("tool", "function"):
            messages.append(
                Message(
                    role="tool",
                    text=text,
                    has_image=image,
                    tool_call_id=str(raw.get("tool_call_id") or raw.get("name")),
                )
            )
        elif role == "assistant":
            calls = [
                ToolCall(
                    id=str(c.get("id")),
                    name=str((c.get("function") or {}).get("name")),
                    arguments=(c.get("function") or {}).get("arguments"),
                )
                for c in raw.get("tool_calls") or []
            ]
            messages.append(Message(role="assistant", text=text, tool_calls=calls))
        else:
            messages.append(Message(role="user", text=text, has_image=image))
    tools = [
        ToolInfo(name=str(f["name"]), schema=f.get("parameters") or {})
        for f in ((t.get("function") or {}) for t in body.get("tools") or [])
        if "name" in f
    ]
    tools += [
        ToolInfo(name=str(f["name"]), schema=f.get("parameters") or {})
        for f in body.get("functions") or []
        if "name" in f
    ]
    json_schema: dict[str, Any] | None = None
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        json_schema = (fmt.get("json_schema") or {}).get("schema") or {}
    elif isinstance(fmt, dict) and fmt.get("type") == "json_object":
        json_schema = {}
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    return ParsedRequest(
        wire_api="openai-chat",
        model=str(body.get("model", "")),
        stream=bool(body.get("stream")),
        system="\n".join(m.text for m in messages if m.role == "system"),
        messages=messages,
        tools=tools,
        json_schema=json_schema,
        include_usage=include_usage,
    )


def _usage(plan: Plan) -> dict[str, int]:
    return {
        "prompt_tokens": plan.usage.input_tokens,
        "completion_tokens": plan.usage.output_tokens,
        "total_tokens": plan.usage.input_tokens + plan.usage.output_tokens,
    }


def _finish(plan: Plan) -> str:
    return "tool_calls" if plan.stop_for_tools else "stop"


def render_json(plan: Plan, request: ParsedRequest) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": plan.text}
    if plan.thinking:
        message["reasoning_content"] = plan.thinking
    if plan.tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_fake_{c.id}",
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments_json()},
            }
            for c in plan.tool_calls
        ]
    return {
        "id": f"chatcmpl-fake-{plan.serial}",
        "object": "chat.completion",
        "created": 0,
        "model": request.model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(plan)}],
        "usage": _usage(plan),
    }


def render_stream(plan: Plan, request: ParsedRequest) -> list[Frame]:
    frames: list[Frame] = []

    def chunk(choices: list[dict[str, Any]], delay: float = 0.0, **extra: Any) -> None:
        frames.append(
            sse(
                {
                    "id": f"chatcmpl-fake-{plan.serial}",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": request.model,
                    "choices": choices,
                }
                | extra,
                delay=delay,
            )
        )

    def delta(value: dict[str, Any], delay: float = 0.0) -> None:
        chunk([{"index": 0, "delta": value, "finish_reason": None}], delay)

    delta({"role": "assistant", "content": ""})
    if plan.thinking:
        delta({"reasoning_content": plan.thinking})
    for text, delay in text_deltas(plan):
        delta({"content": text}, delay)
    for index, call in enumerate(plan.tool_calls):
        delta(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": f"call_fake_{call.id}",
                        "type": "function",
                        "function": {"name": call.name, "arguments": ""},
                    }
                ]
            }
        )
        for part in halves(call.arguments_json()):
            delta({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
    chunk([{"index": 0, "delta": {}, "finish_reason": _finish(plan)}])
    if request.include_usage:
        chunk([], usage=_usage(plan))
    frames.append(sse("[DONE]"))
    return frames


def render_error(spec: ErrorSpec) -> tuple[int, dict[str, Any]]:
    return _openai_error(spec)


def render_stream_error(spec: ErrorSpec, plan: Plan) -> Frame:
    """An ``{"error": …}`` data line, as OpenAI-compatible servers report a failed stream."""
    return sse(render_error(spec)[1])
