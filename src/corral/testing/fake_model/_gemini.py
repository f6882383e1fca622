"""Google Gemini: ``/v1beta/models/{model}:streamGenerateContent?alt=sse``, ``:generateContent``,
``:countTokens`` and ``:embedContent``, as Gemini CLI calls them."""

from __future__ import annotations

import json
from typing import Any

from ._asgi import Frame
from ._plan import Plan
from ._scenario import ErrorSpec
from ._types import Message, ParsedRequest, ToolCall, ToolInfo
from ._wire import error_message, error_status, flatten, sse, text_deltas

_STATUS_NAMES = {
    "rate_limit": "RESOURCE_EXHAUSTED",
    "server": "INTERNAL",
    "overloaded": "UNAVAILABLE",
    "bad_request": "INVALID_ARGUMENT",
}


def parse(body: dict[str, Any], model: str, stream: bool) -> ParsedRequest:
    system_raw = body.get("systemInstruction") or body.get("system_instruction")
    system, _ = flatten(
        (system_raw or {}).get("parts") if isinstance(system_raw, dict) else system_raw
    )
    messages: list[Message] = []
    for content in body.get("contents") or []:
        messages.extend(_parse_content(content))
    tools: list[ToolInfo] = []
    for group in body.get("tools") or []:
        for decl in (group or {}).get("functionDeclarations") or []:
            schema = decl.get("parametersJsonSchema") or decl.get("parameters") or {}
            tools.append(ToolInfo(name=str(decl.get("name")), schema=schema))
    config = body.get("generationConfig") or {}
    json_schema: dict[str, Any] | None = None
    if config.get("responseMimeType") == "application/json":
        json_schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
    return ParsedRequest(
        wire_api="gemini",
        model=model,
        stream=stream,
        system=system,
        messages=messages,
        tools=tools,
        json_schema=json_schema,
    )


def _parse_content(content: dict[str, Any]) -> list[Message]:
    role = "assistant" if content.get("role") == "model" else "user"
    texts: list[str] = []
    image = False
    calls: list[ToolCall] = []
    results: list[Message] = []
    for part in content.get("parts") or []:
        if "text" in part and not part.get("thought"):
            texts.append(str(part["text"]))
        elif "inlineData" in part or "fileData" in part:
            data = part.get("inlineData") or part.get("fileData") or {}
            image = image or str(data.get("mimeType", "")).startswith("image/")
        elif "functionCall" in part:
            call = part["functionCall"]
            calls.append(
                ToolCall(
                    id=str(call.get("id") or call.get("name")),
                    name=str(call.get("name")),
                    arguments=call.get("args"),
                )
            )
        elif "functionResponse" in part:
            response = part["functionResponse"]
            results.append(
                Message(
                    role="tool",
                    text=json.dumps(response.get("response")),
                    tool_call_id=str(response.get("id") or response.get("name")),
                )
            )
    text = "\n".join(texts)
    if role == "assistant":
        return [Message(role="assistant", text=text, tool_calls=calls)]
    out = [Message(role="user", text=text, has_image=image)] if text or image or not results else []
    return out + results


def _usage(plan: Plan) -> dict[str, int]:
    return {
        "promptTokenCount": plan.usage.input_tokens,
        "candidatesTokenCount": plan.usage.output_tokens,
        "totalTokenCount": plan.usage.input_tokens + plan.usage.output_tokens,
    }


def _call_parts(plan: Plan) -> list[dict[str, Any]]:
    return [
        {
            "functionCall": {
                "id": f"call_fake_{c.id}",
                "name": c.name,
                "args": c.arguments if isinstance(c.arguments, dict) else {},
            }
        }
        for c in plan.tool_calls
    ]


def _response(
    parts: list[dict[str, Any]], plan: Plan, request: ParsedRequest, last: bool
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    out: dict[str, Any] = {
        "candidates": [candidate],
        "modelVersion": request.model,
        "responseId": f"fake-{plan.serial}",
    }
    if last:
        candidate["finishReason"] = "STOP"
        out["usageMetadata"] = _usage(plan)
    return out


def render_json(plan: Plan, request: ParsedRequest) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if plan.thinking:
        parts.append({"text": plan.thinking, "thought": True})
    if plan.text:
        parts.append({"text": plan.text})
    return _response(parts + _call_parts(plan), plan, request, last=True)


def render_stream(plan: Plan, request: ParsedRequest) -> list[Frame]:
    pieces: list[tuple[list[dict[str, Any]], float]] = []
    if plan.thinking:
        pieces.append(([{"text": plan.thinking, "thought": True}], 0.0))
    pieces += [([{"text": chunk}], delay) for chunk, delay in text_deltas(plan)]
    if plan.tool_calls:
        pieces.append((_call_parts(plan), 0.0))
    if not pieces:
        pieces.append(([{"text": ""}], 0.0))
    return [
        sse(_response(parts, plan, request, last=i == len(pieces) - 1), delay=delay)
        for i, (parts, delay) in enumerate(pieces)
    ]


def render_error(spec: ErrorSpec) -> tuple[int, dict[str, Any]]:
    status = error_status(spec)
    return status, {
        "error": {
            "code": status,
            "message": error_message(spec),
            "status": _STATUS_NAMES[spec.kind],
        }
    }


def count_tokens(body: dict[str, Any]) -> dict[str, Any]:
    return {"totalTokens": 10}


def embed(body: dict[str, Any]) -> dict[str, Any]:
    return {"embedding": {"values": [0.0] * 8}}


def render_stream_error(spec: ErrorSpec, plan: Plan) -> Frame:
    """An ``{"error": …}`` data line in the Google error shape."""
    return sse(render_error(spec)[1])
