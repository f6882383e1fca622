"""OpenAI Responses ⇄ the internal representation (inbound and outbound).

A reasoning item's own signature (origin ``openai-responses``) is the JSON ``{"id", "enc"}`` of its
item id and ``encrypted_content``; a foreign signature goes out in ``encrypted_content`` as an
envelope, which Codex sends back verbatim (it asks for ``reasoning.encrypted_content``). Custom
(freeform) tools become functions taking ``{"input": str}`` for other APIs and are turned back
into ``custom_tool_call`` items for the client. Hosted tools (web search…) and Codex namespaces
are not carried to other APIs.
"""

from __future__ import annotations

import json
from typing import Any

from . import _ir as ir
from ._common import (
    clean_schema,
    content_text,
    data_url,
    drop_unknown,
    image_from_data_url,
    mint,
    result_parts,
)
from ._sse import dumps, frame, loads_object

WIRE: ir.Wire = "openai-responses"
_KNOWN = frozenset(
    {
        "model",
        "input",
        "instructions",
        "tools",
        "tool_choice",
        "max_output_tokens",
        "temperature",
        "top_p",
        "stream",
        "reasoning",
        "parallel_tool_calls",
        "store",
        "include",
        "text",
    }
)
_EFFORT = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 24576, "xhigh": 32768}
_STATUS = {"overloaded": 503, "timeout": 504, "disconnect": 502}
FREEFORM_SCHEMA = {
    "type": "object",
    "properties": {"input": {"type": "string"}},
    "required": ["input"],
}


def _own_signature(item: dict[str, Any]) -> tuple[ir.Wire | None, str | None]:
    enc = item.get("encrypted_content")
    if isinstance(enc, str) and enc:
        origin, signature = ir.unwrap_signature(enc, WIRE)
        if origin != WIRE:
            return origin, signature
    if not item.get("id") and not enc:
        return None, None
    return WIRE, dumps({"id": item.get("id"), "enc": enc})


def parse_request(body: dict[str, Any]) -> ir.Request:
    system = [str(body.get("instructions") or "")]
    messages: list[ir.Message] = []
    raw_input = body.get("input")
    if isinstance(raw_input, str):
        raw_input = [{"type": "message", "role": "user", "content": raw_input}]
    for item in raw_input if isinstance(raw_input, list) else []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            if role in ("system", "developer"):
                system.append(content_text(item.get("content")))
            else:
                _add(
                    messages,
                    "assistant" if role == "assistant" else "user",
                    _parts(item.get("content")),
                )
        elif kind == "reasoning":
            text = "\n".join(
                str(s.get("text", "")) for s in item.get("summary") or [] if isinstance(s, dict)
            )
            origin, signature = _own_signature(item)
            _add(messages, "assistant", [ir.Thinking(text, signature, origin)])
        elif kind in ("function_call", "custom_tool_call"):
            arguments = (
                {"input": str(item.get("input", ""))}
                if kind == "custom_tool_call"
                else ir.parse_arguments(item.get("arguments"))
            )
            call = ir.ToolUse(
                str(item.get("call_id") or mint("call_")), str(item.get("name")), arguments
            )
            _add(messages, "assistant", [call])
        elif kind in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            _add(messages, "user", [ir.ToolResult(str(item.get("call_id")), result_parts(output))])
    tools: list[ir.Tool] = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict) or "name" not in tool:
            continue
        if tool.get("type") == "function":
            tools.append(
                ir.Tool(
                    str(tool["name"]),
                    str(tool.get("description") or ""),
                    tool.get("parameters") or {},
                )
            )
        elif tool.get("type") == "custom":
            tools.append(
                ir.Tool(
                    str(tool["name"]),
                    str(tool.get("description") or ""),
                    FREEFORM_SCHEMA,
                    freeform=True,
                )
            )
    choice = body.get("tool_choice")
    tool_choice: str | None = None
    if isinstance(choice, str):
        tool_choice = {"required": "any"}.get(choice, choice)
    elif isinstance(choice, dict) and choice.get("name"):
        tool_choice = str(choice["name"])
    fmt = body.get("text", {}).get("format") if isinstance(body.get("text"), dict) else None
    json_schema = None
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        json_schema = fmt.get("schema") or {}
    elif isinstance(fmt, dict) and fmt.get("type") == "json_object":
        json_schema = {}
    reasoning = body.get("reasoning")
    budget = None
    if isinstance(reasoning, dict) and reasoning.get("effort") not in (None, "none"):
        budget = _EFFORT.get(str(reasoning.get("effort")), 0)
    return ir.Request(
        model=str(body.get("model") or ""),
        messages=messages,
        system="\n\n".join(s for s in system if s),
        tools=tools,
        tool_choice=tool_choice,
        max_tokens=body.get("max_output_tokens"),
        temperature=body.get("temperature"),
        top_p=body.get("top_p"),
        stream=bool(body.get("stream")),
        thinking_budget=budget,
        parallel_tool_calls=body.get("parallel_tool_calls"),
        json_schema=json_schema,
        dropped=drop_unknown(body, _KNOWN, WIRE),
    )


def _add(messages: list[ir.Message], role: Any, parts: list[ir.Part]) -> None:
    if messages and messages[-1].role == role:
        messages[-1].content.extend(parts)
    else:
        messages.append(ir.Message(role, parts))


def _parts(content: Any) -> list[ir.Part]:
    if isinstance(content, str):
        return [ir.Text(content)]
    parts: list[ir.Part] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") in ("input_text", "output_text", "text"):
            parts.append(ir.Text(str(part.get("text", ""))))
        elif part.get("type") == "input_image":
            parts.append(image_from_data_url(str(part.get("image_url") or "")))
    return parts


def build_request(req: ir.Request, model: str) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    for message in req.messages:
        items.extend(_render_message(message))
    body: dict[str, Any] = {"model": model, "input": items, "store": False}
    if req.system:
        body["instructions"] = req.system
    if req.tools:
        body["tools"] = [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": clean_schema(t.schema, WIRE),
            }
            for t in req.tools
        ]
        if req.tool_choice:
            body["tool_choice"] = (
                {"any": "required"}.get(req.tool_choice, req.tool_choice)
                if req.tool_choice in ("auto", "any", "none")
                else {"type": "function", "name": req.tool_choice}
            )
        if req.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = req.parallel_tool_calls
    if req.max_tokens:
        body["max_output_tokens"] = req.max_tokens
    for key in ("temperature", "top_p"):
        if getattr(req, key) is not None:
            body[key] = getattr(req, key)
    if req.thinking_budget is not None:
        effort = next((e for e, b in _EFFORT.items() if b >= req.thinking_budget), "high")
        body["reasoning"] = {"effort": effort, "summary": "auto"}
        body["include"] = ["reasoning.encrypted_content"]
    if req.json_schema:
        body["text"] = {
            "format": {"type": "json_schema", "name": "response", "schema": req.json_schema}
        }
    elif req.json_schema is not None:
        body["text"] = {"format": {"type": "json_object"}}
    if req.stream:
        body["stream"] = True
    return body


def _render_message(message: ir.Message) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    texts: list[dict[str, Any]] = []
    text_type = "output_text" if message.role == "assistant" else "input_text"

    def flush() -> None:
        if texts:
            items.append({"type": "message", "role": message.role, "content": list(texts)})
            texts.clear()

    for part in message.content:
        if isinstance(part, ir.Text):
            if part.text:
                texts.append({"type": text_type, "text": part.text})
        elif isinstance(part, ir.Image):
            texts.append({"type": "input_image", "image_url": data_url(part)})
        elif isinstance(part, ir.Thinking):
            flush()
            signature = ir.native_signature(part, WIRE)
            if signature is None:
                continue
            own = loads_object(signature) or {}
            item: dict[str, Any] = {
                "type": "reasoning",
                "id": own.get("id"),
                "summary": [{"type": "summary_text", "text": part.text}] if part.text else [],
            }
            if own.get("enc"):
                item["encrypted_content"] = own["enc"]
            items.append(item)
        elif isinstance(part, ir.ToolUse):
            flush()
            items.append(
                {
                    "type": "function_call",
                    "call_id": part.id,
                    "name": part.name,
                    "arguments": json.dumps(part.arguments),
                }
            )
        elif isinstance(part, ir.ToolResult):
            flush()
            output: Any = part.text()
            if any(isinstance(p, ir.Image) for p in part.content):
                output = [
                    {"type": "input_text", "text": p.text}
                    if isinstance(p, ir.Text)
                    else {"type": "input_image", "image_url": data_url(p)}
                    for p in part.content
                ]
            items.append(
                {"type": "function_call_output", "call_id": part.tool_use_id, "output": output}
            )
    flush()
    return items


# ---- responses ---------------------------------------------------------------------------


def _usage(raw: Any) -> ir.Usage:
    if not isinstance(raw, dict):
        return ir.Usage()
    inp = raw.get("input_tokens_details") or {}
    out = raw.get("output_tokens_details") or {}
    return ir.Usage(
        input_tokens=int(raw.get("input_tokens") or 0),
        output_tokens=int(raw.get("output_tokens") or 0),
        cache_read_tokens=int(inp.get("cached_tokens") or 0) if isinstance(inp, dict) else 0,
        reasoning_tokens=int(out.get("reasoning_tokens") or 0) if isinstance(out, dict) else 0,
    )


def _render_usage(usage: ir.Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cache_read_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }


def _stop(body: dict[str, Any], content: list[ir.Part]) -> ir.StopReason:
    if any(isinstance(p, ir.ToolUse) for p in content):
        return "tool_use"
    details = body.get("incomplete_details") or {}
    if body.get("status") == "incomplete" and isinstance(details, dict):
        return "max_tokens" if details.get("reason") == "max_output_tokens" else "refusal"
    return "end_turn"


def _item_part(item: dict[str, Any]) -> ir.Part | None:
    parsed = parse_request({"input": [item]}).messages
    if not parsed or not parsed[0].content:
        return None
    part = parsed[0].content[0]
    return part if not isinstance(part, ir.ToolResult) else None


def parse_response(body: dict[str, Any]) -> ir.Response:
    content: list[ir.Part] = []
    for item in body.get("output") or []:
        if isinstance(item, dict) and item.get("type") == "message":
            content += [
                ir.Text(p.text) for p in _parts(item.get("content")) if isinstance(p, ir.Text)
            ]
        elif isinstance(item, dict):
            part = _item_part(item)
            if part is not None:
                content.append(part)
    return ir.Response(
        id=str(body.get("id") or mint("resp_")),
        model=str(body.get("model") or ""),
        content=content,
        stop_reason=_stop(body, content),
        usage=_usage(body.get("usage")),
    )


def _client_item(
    part: ir.Part, freeform: frozenset[str], done: bool = True
) -> dict[str, Any] | None:
    if isinstance(part, ir.Text):
        text = part.text if done else ""
        content = [{"type": "output_text", "text": text, "annotations": []}] if done else []
        return {
            "type": "message",
            "id": mint("msg_"),
            "role": "assistant",
            "status": "completed" if done else "in_progress",
            "content": content,
        }
    if isinstance(part, ir.Thinking):
        item: dict[str, Any] = {"type": "reasoning", "id": mint("rs_"), "summary": []}
        own = loads_object(part.signature or "") if part.origin == WIRE else None
        if own is not None:
            item["id"] = own.get("id") or item["id"]
            if own.get("enc"):
                item["encrypted_content"] = own["enc"]
        elif part.signature:
            item["encrypted_content"] = ir.wrap_signature(part.origin, part.signature)
        if done and part.text:
            item["summary"] = [{"type": "summary_text", "text": part.text}]
        return item
    if isinstance(part, ir.ToolUse):
        status = "completed" if done else "in_progress"
        if part.name in freeform:
            raw = part.arguments.get("input", "") if done else ""
            return {
                "type": "custom_tool_call",
                "id": mint("ctc_"),
                "call_id": part.id,
                "name": part.name,
                "input": raw,
                "status": status,
            }
        arguments = json.dumps(part.arguments) if done else ""
        return {
            "type": "function_call",
            "id": mint("fc_"),
            "call_id": part.id,
            "name": part.name,
            "arguments": arguments,
            "status": status,
        }
    return None


def _response(
    resp_id: str, model: str, output: list[dict[str, Any]], usage: ir.Usage | None, status: str
) -> dict[str, Any]:
    return {
        "id": resp_id,
        "object": "response",
        "created_at": 0,
        "status": status,
        "model": model,
        "output": output,
        "usage": _render_usage(usage) if usage is not None else None,
    }


def render_response(
    resp: ir.Response, model: str, request: ir.Request | None = None
) -> dict[str, Any]:
    freeform = frozenset(t.name for t in (request.tools if request else []) if t.freeform)
    output = [i for i in (_client_item(p, freeform) for p in resp.content) if i is not None]
    status = "incomplete" if resp.stop_reason == "max_tokens" else "completed"
    body = _response(
        resp.id if resp.id.startswith("resp_") else f"resp_{resp.id}",
        model,
        output,
        resp.usage,
        status,
    )
    if status == "incomplete":
        body["incomplete_details"] = {"reason": "max_output_tokens"}
    return body


# ---- errors ------------------------------------------------------------------------------


def render_error(error: ir.ErrorInfo) -> tuple[int, dict[str, Any]]:
    from ._chat import render_error as chat_error

    return chat_error(error)


def stream_error(error: ir.ErrorInfo, response_id: str = "", sequence: int = 0) -> bytes:
    from ._chat import ERROR_TYPES

    response = {
        "id": response_id or mint("resp_"),
        "object": "response",
        "status": "failed",
        "output": [],
        "error": {"code": ERROR_TYPES[error.kind][1], "message": error.message},
    }
    return frame(
        {"type": "response.failed", "sequence_number": sequence, "response": response},
        "response.failed",
    )


def parse_error(status: int, body: Any, retry_after: float | None) -> ir.ErrorInfo:
    from ._chat import parse_error as chat_parse

    return chat_parse(status, body, retry_after)
