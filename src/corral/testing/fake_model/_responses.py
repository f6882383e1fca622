"""OpenAI Responses: ``POST /v1/responses`` (SSE and JSON), as Codex calls it.

Tools come from the top-level ``tools`` list and from ``input[]`` items of type ``additional_tools``
(Codex "responses-lite"), where they may be grouped into ``namespace`` entries.
"""

from __future__ import annotations

from typing import Any

from ._asgi import Frame
from ._plan import Plan, PlannedToolCall
from ._scenario import ErrorSpec
from ._types import Message, ParsedRequest, Role, ToolCall, ToolInfo
from ._wire import error_message, error_status, flatten, halves, sse, text_deltas

_ERROR_CODES = {
    "rate_limit": ("rate_limit_exceeded", "requests"),
    "server": ("server_error", "server_error"),
    "overloaded": ("server_is_overloaded", "server_error"),
    "bad_request": ("invalid_request", "invalid_request_error"),
}


def _tools(raw: list[Any], namespace: str | None = None) -> list[ToolInfo]:
    out: list[ToolInfo] = []
    for tool in raw:
        if not isinstance(tool, dict):
            continue
        kind = tool.get("type", "function")
        if kind == "namespace" or (isinstance(tool.get("tools"), list) and "name" in tool):
            out.extend(_tools(tool.get("tools") or [], str(tool.get("name"))))
        elif kind == "function" and "name" in tool:
            out.append(
                ToolInfo(
                    name=str(tool["name"]), schema=tool.get("parameters") or {}, namespace=namespace
                )
            )
        elif kind == "custom" and "name" in tool:
            out.append(ToolInfo(name=str(tool["name"]), freeform=True, namespace=namespace))
        elif kind == "local_shell":
            out.append(ToolInfo(name="local_shell", namespace=namespace))
    return out


def parse(body: dict[str, Any]) -> ParsedRequest:
    tools = _tools(body.get("tools") or [])
    messages: list[Message] = []
    raw_input = body.get("input")
    if isinstance(raw_input, str):
        messages.append(Message(role="user", text=raw_input))
    for item in raw_input if isinstance(raw_input, list) else []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind == "additional_tools":
            tools.extend(_tools(item.get("tools") or []))
        elif kind == "message":
            role = item.get("role", "user")
            text, image = flatten(item.get("content"))
            norm: Role = (
                "system"
                if role in ("system", "developer")
                else "assistant"
                if role == "assistant"
                else "user"
            )
            messages.append(Message(role=norm, text=text, has_image=image))
        elif kind in ("function_call", "custom_tool_call"):
            arguments = item.get("arguments", item.get("input"))
            messages.append(
                Message(
                    role="assistant",
                    tool_calls=[
                        ToolCall(
                            id=str(item.get("call_id")),
                            name=str(item.get("name")),
                            arguments=arguments,
                        )
                    ],
                )
            )
        elif kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            text, image = flatten(item.get("output"))
            messages.append(
                Message(
                    role="tool", text=text, has_image=image, tool_call_id=str(item.get("call_id"))
                )
            )
    json_schema: dict[str, Any] | None = None
    fmt = (body.get("text") or {}).get("format") if isinstance(body.get("text"), dict) else None
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        json_schema = fmt.get("schema") or {}
    elif isinstance(fmt, dict) and fmt.get("type") == "json_object":
        json_schema = {}
    return ParsedRequest(
        wire_api="openai-responses",
        model=str(body.get("model", "")),
        stream=bool(body.get("stream")),
        system=str(body.get("instructions") or ""),
        messages=messages,
        tools=tools,
        json_schema=json_schema,
    )


def _call_item(call: PlannedToolCall, done: bool) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": f"fc_fake_{call.id}",
        "call_id": f"call_fake_{call.id}",
        "name": call.name,
        "status": "completed" if done else "in_progress",
    }
    if call.namespace:
        item["namespace"] = call.namespace
    if call.freeform:
        return item | {"type": "custom_tool_call", "input": call.arguments_json() if done else ""}
    return item | {"type": "function_call", "arguments": call.arguments_json() if done else ""}


def _items(plan: Plan) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if plan.thinking:
        items.append(
            {
                "type": "reasoning",
                "id": f"rs_fake_{plan.serial}",
                "summary": [{"type": "summary_text", "text": plan.thinking}],
            }
        )
    if plan.text:
        items.append(
            {
                "type": "message",
                "id": f"msg_fake_{plan.serial}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": plan.text, "annotations": []}],
            }
        )
    items.extend(_call_item(call, done=True) for call in plan.tool_calls)
    return items


def _response(plan: Plan, request: ParsedRequest, done: bool) -> dict[str, Any]:
    usage = {
        "input_tokens": plan.usage.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": plan.usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": plan.usage.input_tokens + plan.usage.output_tokens,
    }
    return {
        "id": f"resp_fake_{plan.serial}",
        "object": "response",
        "created_at": 0,
        "status": "completed" if done else "in_progress",
        "model": request.model,
        "output": _items(plan) if done else [],
        "usage": usage if done else None,
    }


def render_json(plan: Plan, request: ParsedRequest) -> dict[str, Any]:
    return _response(plan, request, done=True)


def render_stream(plan: Plan, request: ParsedRequest) -> list[Frame]:
    frames: list[Frame] = []

    def emit(kind: str, delay: float = 0.0, **data: Any) -> None:
        frames.append(sse({"type": kind, "sequence_number": len(frames)} | data, kind, delay))

    emit("response.created", response=_response(plan, request, done=False))
    emit("response.in_progress", response=_response(plan, request, done=False))
    done_items = _items(plan)
    out = 0
    if plan.thinking:
        item = done_items[out]
        emit("response.output_item.added", output_index=out, item=item | {"summary": []})
        emit(
            "response.reasoning_summary_text.delta",
            item_id=item["id"],
            output_index=out,
            summary_index=0,
            delta=plan.thinking,
        )
        emit(
            "response.reasoning_summary_text.done",
            item_id=item["id"],
            output_index=out,
            summary_index=0,
            text=plan.thinking,
        )
        emit("response.output_item.done", output_index=out, item=item)
        out += 1
    if plan.text:
        item = done_items[out]
        ids = {"item_id": item["id"], "output_index": out, "content_index": 0}
        emit(
            "response.output_item.added",
            output_index=out,
            item=item | {"status": "in_progress", "content": []},
        )
        emit(
            "response.content_part.added",
            **ids,
            part={"type": "output_text", "text": "", "annotations": []},
        )
        for chunk, delay in text_deltas(plan):
            emit("response.output_text.delta", delay, **ids, delta=chunk)
        emit("response.output_text.done", **ids, text=plan.text)
        emit("response.content_part.done", **ids, part=item["content"][0])
        emit("response.output_item.done", output_index=out, item=item)
        out += 1
    for call in plan.tool_calls:
        item = _call_item(call, done=True)
        emit("response.output_item.added", output_index=out, item=_call_item(call, done=False))
        kind = "custom_tool_call_input" if call.freeform else "function_call_arguments"
        for part in halves(call.arguments_json()):
            emit(f"response.{kind}.delta", item_id=item["id"], output_index=out, delta=part)
        final: dict[str, Any] = (
            {"input": call.arguments_json()}
            if call.freeform
            else {"arguments": call.arguments_json()}
        )
        emit(f"response.{kind}.done", item_id=item["id"], output_index=out, **final)
        emit("response.output_item.done", output_index=out, item=item)
        out += 1
    emit("response.completed", response=_response(plan, request, done=True))
    return frames


def render_error(spec: ErrorSpec) -> tuple[int, dict[str, Any]]:
    code, kind = _ERROR_CODES[spec.kind]
    return error_status(spec), {
        "error": {"message": error_message(spec), "type": kind, "param": None, "code": code}
    }


def render_stream_error(spec: ErrorSpec, plan: Plan) -> Frame:
    """``response.failed`` with the error code, as the Responses API ends a failed stream."""
    code, _ = _ERROR_CODES[spec.kind]
    response = {
        "id": f"resp_fake_{plan.serial}",
        "object": "response",
        "status": "failed",
        "output": [],
        "error": {"code": code, "message": error_message(spec)},
    }
    return sse({"type": "response.failed", "response": response}, "response.failed")
