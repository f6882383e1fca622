"""Anthropic Messages ⇄ the internal representation (inbound and outbound)."""

from __future__ import annotations

from typing import Any

from . import _ir as ir
from ._common import clean_schema, drop_unknown, error_from_status, error_message, mint
from ._common import result_parts as _result_parts
from ._sse import frame, loads_object

WIRE: ir.Wire = "anthropic"
_KNOWN = frozenset(
    {
        "model",
        "messages",
        "system",
        "tools",
        "tool_choice",
        "max_tokens",
        "temperature",
        "top_p",
        "top_k",
        "stop_sequences",
        "stream",
        "thinking",
        "metadata",
        "output_config",
        "output_format",
    }
)
_STOPS: dict[str, ir.StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
    "pause_turn": "end_turn",
}
ERROR_TYPES: dict[str, str] = {
    "bad_request": "invalid_request_error",
    "auth": "authentication_error",
    "permission": "permission_error",
    "not_found": "not_found_error",
    "too_large": "request_too_large",
    "rate_limit": "rate_limit_error",
    "server": "api_error",
    "overloaded": "overloaded_error",
    "timeout": "timeout_error",
    "disconnect": "api_error",
}
_STATUS = {"overloaded": 529, "timeout": 504, "disconnect": 502}


# ---- requests --------------------------------------------------------------------------------


def parse_request(body: dict[str, Any]) -> ir.Request:
    system = body.get("system")
    system_text = (
        "\n\n".join(
            str(b.get("text", ""))
            for b in system
            if isinstance(b, dict) and b.get("type") == "text"
        )
        if isinstance(system, list)
        else str(system or "")
    )
    messages = [_parse_message(m) for m in body.get("messages") or [] if isinstance(m, dict)]
    tools = [
        ir.Tool(str(t["name"]), str(t.get("description") or ""), t.get("input_schema") or {})
        for t in body.get("tools") or []
        if isinstance(t, dict) and "name" in t and t.get("type") in (None, "custom")
    ]
    choice = body.get("tool_choice")
    tool_choice: str | None = None
    if isinstance(choice, dict):
        kind = choice.get("type")
        tool_choice = str(choice.get("name")) if kind == "tool" else str(kind)
    thinking = body.get("thinking")
    budget = None
    if isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive"):
        budget = int(thinking.get("budget_tokens") or 0)
    stop = body.get("stop_sequences")
    fmt = (body.get("output_config") or {}).get("format") or body.get("output_format")
    json_schema = None
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        json_schema = fmt.get("schema") or {}
    return ir.Request(
        json_schema=json_schema,
        model=str(body.get("model") or ""),
        messages=messages,
        system=system_text,
        tools=tools,
        tool_choice=tool_choice,
        max_tokens=body.get("max_tokens") if isinstance(body.get("max_tokens"), int) else None,
        temperature=body.get("temperature"),
        top_p=body.get("top_p"),
        stop=[str(s) for s in stop] if isinstance(stop, list) else [],
        stream=bool(body.get("stream")),
        thinking_budget=budget,
        parallel_tool_calls=(
            None
            if not isinstance(choice, dict) or "disable_parallel_tool_use" not in choice
            else not choice["disable_parallel_tool_use"]
        ),
        dropped=drop_unknown(body, _KNOWN, WIRE),
    )


def _parse_message(raw: dict[str, Any]) -> ir.Message:
    role: Any = "assistant" if raw.get("role") == "assistant" else "user"
    content = raw.get("content")
    if isinstance(content, str):
        return ir.Message(role, [ir.Text(content)])
    parts: list[ir.Part] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(ir.Text(str(block.get("text", ""))))
        elif kind == "image":
            src = block.get("source") or {}
            parts.append(
                ir.Image(src.get("media_type", "image/png"), src.get("data"), src.get("url"))
            )
        elif kind == "thinking":
            origin, signature = ir.unwrap_signature(block.get("signature"), WIRE)
            parts.append(ir.Thinking(str(block.get("thinking", "")), signature, origin))
        elif kind == "redacted_thinking":
            parts.append(ir.Thinking("", str(block.get("data", "")), WIRE, redacted=True))
        elif kind == "tool_use":
            args = block.get("input")
            parts.append(
                ir.ToolUse(str(block.get("id")), str(block.get("name")), ir.parse_arguments(args))
            )
        elif kind == "tool_result":
            parts.append(
                ir.ToolResult(
                    str(block.get("tool_use_id")),
                    _result_parts(block.get("content")),
                    bool(block.get("is_error")),
                )
            )
    return ir.Message(role, parts)


def build_request(req: ir.Request, model: str) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "max_tokens": req.max_tokens or 8192}
    if req.system:
        body["system"] = req.system
    body["messages"] = [_render_message(m) for m in req.messages]
    if req.tools:
        body["tools"] = [
            {
                "name": t.name,
                "description": t.description,
                "input_schema": clean_schema(t.schema, WIRE),
            }
            for t in req.tools
        ]
    if req.tool_choice and req.tools:
        choice: dict[str, Any] = (
            {"type": req.tool_choice}
            if req.tool_choice in ("auto", "any", "none")
            else {"type": "tool", "name": req.tool_choice}
        )
        if req.parallel_tool_calls is False:
            choice["disable_parallel_tool_use"] = True
        body["tool_choice"] = choice
    if req.thinking_budget is not None:
        budget = max(req.thinking_budget, 1024)
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        body["max_tokens"] = max(body["max_tokens"], budget + 1024)
    else:
        if req.temperature is not None:
            body["temperature"] = req.temperature
        if req.top_p is not None:
            body["top_p"] = req.top_p
    if req.stop:
        body["stop_sequences"] = req.stop
    if req.json_schema is not None:
        schema = req.json_schema or {"type": "object"}
        body["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
    if req.stream:
        body["stream"] = True
    return body


def _render_message(message: ir.Message) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, ir.Text):
            if part.text:
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ir.Image):
            blocks.append({"type": "image", "source": _source(part)})
        elif isinstance(part, ir.Thinking):
            signature = ir.native_signature(part, WIRE)
            if signature is None:
                continue  # Anthropic refuses a thinking block it did not sign.
            if part.redacted:
                blocks.append({"type": "redacted_thinking", "data": signature})
            else:
                blocks.append({"type": "thinking", "thinking": part.text, "signature": signature})
        elif isinstance(part, ir.ToolUse):
            blocks.append(
                {"type": "tool_use", "id": part.id, "name": part.name, "input": part.arguments}
            )
        elif isinstance(part, ir.ToolResult):
            content: list[dict[str, Any]] = [
                {"type": "text", "text": p.text}
                if isinstance(p, ir.Text)
                else {"type": "image", "source": _source(p)}
                for p in part.content
            ]
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": part.tool_use_id}
            block["content"] = content or ""
            if part.is_error:
                block["is_error"] = True
            blocks.append(block)
    if not blocks:
        blocks.append({"type": "text", "text": "."})
    return {"role": message.role, "content": blocks}


def _source(image: ir.Image) -> dict[str, Any]:
    if image.data is not None:
        return {"type": "base64", "media_type": image.media_type, "data": image.data}
    return {"type": "url", "url": image.url or ""}


# ---- responses ---------------------------------------------------------------------------


def _usage(raw: Any) -> ir.Usage:
    if not isinstance(raw, dict):
        return ir.Usage()
    return ir.Usage(
        input_tokens=int(raw.get("input_tokens") or 0),
        output_tokens=int(raw.get("output_tokens") or 0),
        cache_read_tokens=int(raw.get("cache_read_input_tokens") or 0),
        cache_write_tokens=int(raw.get("cache_creation_input_tokens") or 0),
    )


def _delta_usage(usage: ir.Usage) -> dict[str, int]:
    """``message_delta`` usage: output tokens, and input tokens when only the end knew them."""
    out = {"output_tokens": usage.output_tokens}
    if usage.input_tokens:
        out |= {
            "input_tokens": usage.input_tokens,
            "cache_creation_input_tokens": usage.cache_write_tokens,
            "cache_read_input_tokens": usage.cache_read_tokens,
        }
    return out


def _render_usage(usage: ir.Usage) -> dict[str, int]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
    }


def parse_response(body: dict[str, Any]) -> ir.Response:
    message = _parse_message({"role": "assistant", "content": body.get("content") or []})
    return ir.Response(
        id=str(body.get("id") or mint("msg_")),
        model=str(body.get("model") or ""),
        content=message.content,
        stop_reason=_STOPS.get(str(body.get("stop_reason")), "end_turn"),
        usage=_usage(body.get("usage")),
    )


def _client_block(part: ir.Part) -> dict[str, Any] | None:
    if isinstance(part, ir.Text):
        return {"type": "text", "text": part.text}
    if isinstance(part, ir.Thinking):
        if part.redacted and part.origin == WIRE:
            return {"type": "redacted_thinking", "data": part.signature or ""}
        signature = ir.signature_for(part, WIRE) or ir.wrap_signature(part.origin, "")
        return {"type": "thinking", "thinking": part.text, "signature": signature}
    if isinstance(part, ir.ToolUse):
        return {"type": "tool_use", "id": part.id, "name": part.name, "input": part.arguments}
    return None


def render_response(resp: ir.Response, model: str) -> dict[str, Any]:
    return {
        "id": resp.id if resp.id.startswith("msg_") else f"msg_{resp.id}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [b for b in map(_client_block, resp.content) if b is not None],
        "stop_reason": resp.stop_reason,
        "stop_sequence": None,
        "usage": _render_usage(resp.usage),
    }


# ---- streams -----------------------------------------------------------------------------


class Decoder:
    """Anthropic SSE frames (from an upstream) → stream events."""

    def __init__(self) -> None:
        self._stop: ir.StopReason = "end_turn"
        self._usage = ir.Usage()

    def feed(self, event: str, data: str) -> list[ir.Event]:
        obj = loads_object(data)
        if obj is None:
            return []
        kind = obj.get("type", event)
        if kind == "message_start":
            message = obj.get("message") or {}
            self._usage = _usage(message.get("usage"))
            return [
                ir.Start(str(message.get("id") or ""), str(message.get("model") or ""), self._usage)
            ]
        if kind == "content_block_start":
            block = obj.get("content_block") or {}
            index = int(obj.get("index") or 0)
            btype = block.get("type")
            if btype == "tool_use":
                return [
                    ir.BlockStart(index, ir.ToolUse(str(block.get("id")), str(block.get("name"))))
                ]
            if btype == "thinking":
                return [ir.BlockStart(index, ir.Thinking(origin=WIRE))]
            if btype == "redacted_thinking":
                return [
                    ir.BlockStart(index, ir.Thinking(origin=WIRE, redacted=True)),
                    ir.Delta(index, "signature", str(block.get("data", ""))),
                ]
            return [ir.BlockStart(index, ir.Text(""))]
        if kind == "content_block_delta":
            delta = obj.get("delta") or {}
            index = int(obj.get("index") or 0)
            dtype = delta.get("type")
            if dtype == "text_delta":
                return [ir.Delta(index, "text", str(delta.get("text", "")))]
            if dtype == "thinking_delta":
                return [ir.Delta(index, "thinking", str(delta.get("thinking", "")))]
            if dtype == "signature_delta":
                return [ir.Delta(index, "signature", str(delta.get("signature", "")))]
            if dtype == "input_json_delta":
                return [ir.Delta(index, "arguments", str(delta.get("partial_json", "")))]
            return []
        if kind == "content_block_stop":
            return [ir.BlockStop(int(obj.get("index") or 0))]
        if kind == "message_delta":
            delta = obj.get("delta") or {}
            self._stop = _STOPS.get(str(delta.get("stop_reason")), self._stop)
            self._usage = self._usage.merge(_usage(obj.get("usage")))
            return []
        if kind == "message_stop":
            return [ir.Finish(self._stop, self._usage)]
        if kind == "error":
            err = obj.get("error") or {}
            etype = str(err.get("type", "api_error"))
            status = {"overloaded_error": 529, "rate_limit_error": 429}.get(etype, 500)
            return [ir.Failure(error_from_status(status, error_message(obj, "stream error")))]
        return []

    def finish(self) -> list[ir.Event]:
        return []


class Encoder:
    """Stream events → Anthropic SSE frames (to a client)."""

    def __init__(self, model: str, request: ir.Request) -> None:
        self.model = model
        self._thinking_origin: ir.Wire | None = WIRE

    def encode(self, event: ir.Event) -> bytes:
        if isinstance(event, ir.Start):
            message: dict[str, Any] = {
                "id": event.id if event.id.startswith("msg_") else f"msg_{event.id or mint('')}",
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": _render_usage(event.usage or ir.Usage()),
            }
            return frame({"type": "message_start", "message": message}, "message_start")
        if isinstance(event, ir.BlockStart):
            block = event.block
            start: dict[str, Any]
            if isinstance(block, ir.ToolUse):
                start = {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
            elif isinstance(block, ir.Thinking):
                start = {"type": "thinking", "thinking": "", "signature": ""}
                self._thinking_origin = block.origin
            else:
                start = {"type": "text", "text": ""}
            data = {"type": "content_block_start", "index": event.index, "content_block": start}
            return frame(data, "content_block_start")
        if isinstance(event, ir.Delta):
            if event.kind == "text":
                delta: dict[str, str] = {"type": "text_delta", "text": event.value}
            elif event.kind == "thinking":
                delta = {"type": "thinking_delta", "thinking": event.value}
            elif event.kind == "signature":
                origin = self._thinking_origin
                signature = (
                    event.value if origin == WIRE else ir.wrap_signature(origin, event.value)
                )
                delta = {"type": "signature_delta", "signature": signature}
            else:
                delta = {"type": "input_json_delta", "partial_json": event.value}
            data = {"type": "content_block_delta", "index": event.index, "delta": delta}
            return frame(data, "content_block_delta")
        if isinstance(event, ir.BlockStop):
            return frame({"type": "content_block_stop", "index": event.index}, "content_block_stop")
        if isinstance(event, ir.Finish):
            delta_frame = {
                "type": "message_delta",
                "delta": {"stop_reason": event.stop_reason, "stop_sequence": None},
                "usage": _delta_usage(event.usage),
            }
            return frame(delta_frame, "message_delta") + frame(
                {"type": "message_stop"}, "message_stop"
            )
        return stream_error(event.error)


# ---- errors ------------------------------------------------------------------------------


def render_error(error: ir.ErrorInfo) -> tuple[int, dict[str, Any]]:
    status = _STATUS.get(error.kind, error.status)
    body = {"type": "error", "error": {"type": ERROR_TYPES[error.kind], "message": error.message}}
    return status, body


def stream_error(error: ir.ErrorInfo) -> bytes:
    return frame(render_error(error)[1], "error")


def parse_error(status: int, body: Any, retry_after: float | None) -> ir.ErrorInfo:
    kind = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        etype = body["error"].get("type")
        kind = {"overloaded_error": "overloaded", "rate_limit_error": "rate_limit"}.get(str(etype))
    return error_from_status(
        status, error_message(body, f"upstream HTTP {status}"), retry_after, kind
    )
