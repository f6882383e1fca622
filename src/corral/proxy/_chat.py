"""OpenAI Chat Completions ⇄ the internal representation (inbound and outbound).

Reasoning has no standard field here; the de-facto ``reasoning_content`` (DeepSeek, Qwen, vLLM)
carries its text both ways, and a signature rides in ``reasoning_signature`` (read and written by
the proxy only, so a signed block survives a Chat client's round trip).
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
    error_from_status,
    error_message,
    image_from_data_url,
    mint,
    result_parts,
)
from ._sse import frame, loads_object

WIRE: ir.Wire = "openai-chat"
_KNOWN = frozenset(
    {
        "model",
        "messages",
        "tools",
        "tool_choice",
        "max_tokens",
        "max_completion_tokens",
        "temperature",
        "top_p",
        "stop",
        "stream",
        "stream_options",
        "parallel_tool_calls",
        "reasoning_effort",
        "functions",
        "user",
        "n",
        "response_format",
    }
)
_FINISH: dict[str, ir.StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
_FINISH_OUT: dict[str, str] = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "stop_sequence": "stop",
    "refusal": "content_filter",
}
ERROR_TYPES: dict[str, tuple[str, str]] = {
    "bad_request": ("invalid_request_error", "invalid_request"),
    "auth": ("authentication_error", "invalid_api_key"),
    "permission": ("permission_error", "permission_denied"),
    "not_found": ("invalid_request_error", "model_not_found"),
    "too_large": ("invalid_request_error", "context_length_exceeded"),
    "rate_limit": ("requests", "rate_limit_exceeded"),
    "server": ("server_error", "server_error"),
    "overloaded": ("server_error", "server_is_overloaded"),
    "timeout": ("server_error", "timeout"),
    "disconnect": ("server_error", "upstream_disconnected"),
}
_STATUS = {"overloaded": 503, "timeout": 504, "disconnect": 502}
_EFFORT = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 24576}


def parse_request(body: dict[str, Any]) -> ir.Request:
    system: list[str] = []
    messages: list[ir.Message] = []
    for raw in body.get("messages") or []:
        if not isinstance(raw, dict):
            continue
        role = raw.get("role")
        if role in ("system", "developer"):
            system.append(content_text(raw.get("content")))
        elif role in ("tool", "function"):
            part = ir.ToolResult(
                str(raw.get("tool_call_id") or raw.get("name") or ""),
                result_parts(raw.get("content")),
                name=raw.get("name") if isinstance(raw.get("name"), str) else None,
            )
            _append(messages, "user", [part])
        elif role == "assistant":
            parts: list[ir.Part] = []
            reasoning = raw.get("reasoning_content") or raw.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                origin, signature = ir.unwrap_signature(raw.get("reasoning_signature"), WIRE)
                parts.append(ir.Thinking(reasoning, signature, origin))
            parts += _user_parts(raw.get("content"))
            for call in raw.get("tool_calls") or []:
                fn = (call or {}).get("function") or {}
                parts.append(
                    ir.ToolUse(
                        str(call.get("id") or mint("call_")),
                        str(fn.get("name") or ""),
                        ir.parse_arguments(fn.get("arguments")),
                    )
                )
            _append(messages, "assistant", parts)
        else:
            _append(messages, "user", _user_parts(raw.get("content")))
    tools = [
        ir.Tool(str(f["name"]), str(f.get("description") or ""), f.get("parameters") or {})
        for f in ((t or {}).get("function") or {} for t in body.get("tools") or [])
        if isinstance(f, dict) and "name" in f
    ]
    choice = body.get("tool_choice")
    tool_choice: str | None = None
    if isinstance(choice, str):
        tool_choice = {"required": "any"}.get(choice, choice)
    elif isinstance(choice, dict):
        tool_choice = str((choice.get("function") or {}).get("name") or "auto")
    stop = body.get("stop")
    effort = body.get("reasoning_effort")
    fmt = body.get("response_format")
    json_schema = None
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        json_schema = (fmt.get("json_schema") or {}).get("schema") or {}
    elif isinstance(fmt, dict) and fmt.get("type") == "json_object":
        json_schema = {}
    return ir.Request(
        json_schema=json_schema,
        model=str(body.get("model") or ""),
        messages=messages,
        system="\n\n".join(s for s in system if s),
        tools=tools,
        tool_choice=tool_choice,
        max_tokens=body.get("max_completion_tokens") or body.get("max_tokens"),
        temperature=body.get("temperature"),
        top_p=body.get("top_p"),
        stop=[stop] if isinstance(stop, str) else [str(s) for s in stop or []],
        stream=bool(body.get("stream")),
        thinking_budget=_EFFORT.get(str(effort)) if effort else None,
        parallel_tool_calls=body.get("parallel_tool_calls"),
        dropped=drop_unknown(body, _KNOWN, WIRE),
    )


def _append(messages: list[ir.Message], role: Any, parts: list[ir.Part]) -> None:
    # Consecutive tool results (one message each in Chat) become one user turn, as elsewhere.
    if messages and messages[-1].role == role and role == "user":
        messages[-1].content.extend(parts)
    else:
        messages.append(ir.Message(role, parts))


def _user_parts(content: Any) -> list[ir.Part]:
    if isinstance(content, str):
        return [ir.Text(content)] if content else []
    parts: list[ir.Part] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            parts.append(ir.Text(str(part.get("text", ""))))
        elif part.get("type") == "image_url":
            url = part.get("image_url")
            parts.append(image_from_data_url(str(url.get("url") if isinstance(url, dict) else url)))
    return parts


def build_request(req: ir.Request, model: str) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    if req.system:
        messages.append({"role": "system", "content": req.system})
    for message in req.messages:
        messages.extend(_render_message(message))
    body: dict[str, Any] = {"model": model, "messages": messages}
    if req.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": clean_schema(t.schema, WIRE),
                },
            }
            for t in req.tools
        ]
        if req.tool_choice:
            body["tool_choice"] = (
                {"any": "required"}.get(req.tool_choice, req.tool_choice)
                if req.tool_choice in ("auto", "any", "none")
                else {"type": "function", "function": {"name": req.tool_choice}}
            )
        if req.parallel_tool_calls is not None:
            body["parallel_tool_calls"] = req.parallel_tool_calls
    if req.max_tokens:
        body["max_tokens"] = req.max_tokens
    for key in ("temperature", "top_p"):
        if getattr(req, key) is not None:
            body[key] = getattr(req, key)
    if req.stop:
        body["stop"] = req.stop
    if req.json_schema:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "response", "schema": req.json_schema},
        }
    elif req.json_schema is not None:
        body["response_format"] = {"type": "json_object"}
    if req.stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def _render_message(message: ir.Message) -> list[dict[str, Any]]:
    if message.role == "assistant":
        out: dict[str, Any] = {"role": "assistant", "content": None}
        texts = [p.text for p in message.content if isinstance(p, ir.Text)]
        if texts:
            out["content"] = "".join(texts)
        thinking = [p for p in message.content if isinstance(p, ir.Thinking) and p.text]
        if thinking:
            out["reasoning_content"] = "\n".join(p.text for p in thinking)
            signed = next((p for p in thinking if p.signature), None)
            if signed is not None:
                out["reasoning_signature"] = ir.signature_for(signed, WIRE)
        calls = [p for p in message.content if isinstance(p, ir.ToolUse)]
        if calls:
            out["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                }
                for c in calls
            ]
        return [out]
    rendered: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, ir.ToolResult):
            text = part.text() or ("" if part.content else "(no output)")
            rendered.append({"role": "tool", "tool_call_id": part.tool_use_id, "content": text})
        elif isinstance(part, ir.Text) and part.text:
            pending.append({"type": "text", "text": part.text})
        elif isinstance(part, ir.Image):
            pending.append({"type": "image_url", "image_url": {"url": data_url(part)}})
        # Images inside tool results travel as a user message right after the results.
        if isinstance(part, ir.ToolResult):
            for image in (p for p in part.content if isinstance(p, ir.Image)):
                pending.append({"type": "image_url", "image_url": {"url": data_url(image)}})
    if pending:
        only_text = all(p["type"] == "text" for p in pending)
        content: Any = "\n".join(p["text"] for p in pending) if only_text else pending
        rendered.append({"role": "user", "content": content})
    return rendered


# ---- responses ---------------------------------------------------------------------------


def _usage(raw: Any) -> ir.Usage:
    if not isinstance(raw, dict):
        return ir.Usage()
    prompt = raw.get("prompt_tokens_details") or {}
    completion = raw.get("completion_tokens_details") or {}
    return ir.Usage(
        input_tokens=int(raw.get("prompt_tokens") or 0),
        output_tokens=int(raw.get("completion_tokens") or 0),
        cache_read_tokens=int(prompt.get("cached_tokens") or 0) if isinstance(prompt, dict) else 0,
        reasoning_tokens=int(completion.get("reasoning_tokens") or 0)
        if isinstance(completion, dict)
        else 0,
    )


def _render_usage(usage: ir.Usage) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }


def parse_response(body: dict[str, Any]) -> ir.Response:
    choices = body.get("choices") or [{}]
    choice = choices[0] if isinstance(choices[0], dict) else {}
    message = choice.get("message") or {}
    parsed = parse_request({"messages": [message | {"role": "assistant"}]}).messages
    content = parsed[0].content if parsed else []
    return ir.Response(
        id=str(body.get("id") or mint("chatcmpl-")),
        model=str(body.get("model") or ""),
        content=content,
        stop_reason=_FINISH.get(str(choice.get("finish_reason")), "end_turn"),
        usage=_usage(body.get("usage")),
    )


def render_response(resp: ir.Response, model: str) -> dict[str, Any]:
    message = _render_message(ir.Message("assistant", list(resp.content)))[0]
    message["content"] = message["content"] or ""
    return {
        "id": resp.id,
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": _FINISH_OUT[resp.stop_reason]}
        ],
        "usage": _render_usage(resp.usage),
    }


# ---- streams -----------------------------------------------------------------------------


class Decoder:
    """Chat SSE chunks (from an upstream) → stream events.

    Chat has no block boundaries: a block opens when its kind of delta first appears and closes
    when another kind (or another tool-call index) starts. Tool calls are assumed to stream one
    after another, as every known server sends them.
    """

    def __init__(self) -> None:
        self._started = False
        self._index = -1
        self._open: tuple[str, int] | None = None
        self._stop: ir.StopReason | None = None
        self._usage = ir.Usage()
        self._done = False

    def _switch(
        self, key: tuple[str, int], block: ir.Text | ir.Thinking | ir.ToolUse
    ) -> list[ir.Event]:
        out: list[ir.Event] = []
        if self._open == key:
            return out
        if self._open is not None:
            out.append(ir.BlockStop(self._index))
        self._index += 1
        self._open = key
        out.append(ir.BlockStart(self._index, block))
        return out

    def feed(self, event: str, data: str) -> list[ir.Event]:
        if data.strip() == "[DONE]":
            return self.finish()
        obj = loads_object(data)
        if obj is None or self._done:
            return []
        if "error" in obj and "choices" not in obj:
            self._done = True
            return [ir.Failure(parse_error(0, obj, None))]
        out: list[ir.Event] = []
        # OpenAI sends usage only in a last chunk (``choices: []``) when asked for it
        # (``stream_options.include_usage``, which the proxy always sets); servers that report
        # it on every chunk let ``Start`` carry the input tokens already.
        if isinstance(obj.get("usage"), dict):
            self._usage = self._usage.merge(_usage(obj["usage"]))
        if not self._started:
            self._started = True
            out.append(
                ir.Start(
                    str(obj.get("id") or mint("chatcmpl-")),
                    str(obj.get("model") or ""),
                    self._usage,
                )
            )
        for choice in obj.get("choices") or []:
            if not isinstance(choice, dict):
                continue
            delta = choice.get("delta") or {}
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                out += self._switch(("thinking", 0), ir.Thinking())
                out.append(ir.Delta(self._index, "thinking", reasoning))
            signature = delta.get("reasoning_signature")
            if isinstance(signature, str) and signature and self._open == ("thinking", 0):
                out.append(ir.Delta(self._index, "signature", signature))
            text = delta.get("content")
            if isinstance(text, str) and text:
                out += self._switch(("text", 0), ir.Text(""))
                out.append(ir.Delta(self._index, "text", text))
            for call in delta.get("tool_calls") or []:
                if not isinstance(call, dict):
                    continue
                fn = call.get("function") or {}
                key = ("tool", int(call.get("index") or 0))
                if self._open != key:
                    header = ir.ToolUse(
                        str(call.get("id") or mint("call_")), str(fn.get("name") or "")
                    )
                    out += self._switch(key, header)
                arguments = fn.get("arguments")
                if isinstance(arguments, str) and arguments:
                    out.append(ir.Delta(self._index, "arguments", arguments))
            if choice.get("finish_reason"):
                self._stop = _FINISH.get(str(choice["finish_reason"]), "end_turn")
        return out

    def finish(self) -> list[ir.Event]:
        if self._done or not self._started:
            return []
        self._done = True
        out: list[ir.Event] = []
        if self._open is not None:
            out.append(ir.BlockStop(self._index))
        if self._stop is None:
            return [
                *out,
                ir.Failure(ir.ErrorInfo("disconnect", "the upstream stream ended early", 502)),
            ]
        return [*out, ir.Finish(self._stop, self._usage)]


class Encoder:
    """Stream events → Chat SSE chunks (to a client)."""

    def __init__(self, model: str, request: ir.Request) -> None:
        self.model = model
        self.id = mint("chatcmpl-")
        self._tool = -1
        self._thinking: ir.Wire | None = None

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        return frame(
            {
                "id": self.id,
                "object": "chat.completion.chunk",
                "created": 0,
                "model": self.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
        )

    def encode(self, event: ir.Event) -> bytes:
        if isinstance(event, ir.Start):
            return self._chunk({"role": "assistant", "content": ""})
        if isinstance(event, ir.BlockStart):
            if isinstance(event.block, ir.ToolUse):
                self._tool += 1
                call = {
                    "index": self._tool,
                    "id": event.block.id,
                    "type": "function",
                    "function": {"name": event.block.name, "arguments": ""},
                }
                return self._chunk({"tool_calls": [call]})
            if isinstance(event.block, ir.Thinking):
                self._thinking = event.block.origin
            return b""
        if isinstance(event, ir.Delta):
            if event.kind == "text":
                return self._chunk({"content": event.value})
            if event.kind == "thinking":
                return self._chunk({"reasoning_content": event.value})
            if event.kind == "signature":
                signature = ir.signature_for(
                    ir.Thinking(signature=event.value, origin=self._thinking), WIRE
                )
                return self._chunk({"reasoning_signature": signature})
            call = {"index": self._tool, "function": {"arguments": event.value}}
            return self._chunk({"tool_calls": [call]})
        if isinstance(event, ir.BlockStop):
            return b""
        if isinstance(event, ir.Finish):
            usage = frame(
                {
                    "id": self.id,
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": self.model,
                    "choices": [],
                    "usage": _render_usage(event.usage),
                }
            )
            return self._chunk({}, _FINISH_OUT[event.stop_reason]) + usage + frame("[DONE]")
        return stream_error(event.error)


# ---- errors ------------------------------------------------------------------------------


def render_error(error: ir.ErrorInfo) -> tuple[int, dict[str, Any]]:
    kind, code = ERROR_TYPES[error.kind]
    status = _STATUS.get(error.kind, error.status)
    return status, {"error": {"message": error.message, "type": kind, "param": None, "code": code}}


def stream_error(error: ir.ErrorInfo) -> bytes:
    return frame(render_error(error)[1])


def parse_error(status: int, body: Any, retry_after: float | None) -> ir.ErrorInfo:
    """An error from an HTTP status and body; ``status`` 0 (an in-stream error) is inferred."""
    kind = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        code = body["error"].get("code")
        kind = _CODE_KINDS.get(str(code))
        if status == 0:
            status = (
                code if isinstance(code, int) and code >= 400 else _KIND_STATUS.get(kind or "", 500)
            )
    return error_from_status(
        status or 500, error_message(body, f"upstream HTTP {status}"), retry_after, kind
    )


_CODE_KINDS = {
    "insufficient_quota": "rate_limit",
    "rate_limit_exceeded": "rate_limit",
    "server_is_overloaded": "overloaded",
    "server_error": "server",
}
_KIND_STATUS = {"rate_limit": 429, "overloaded": 503, "server": 500}
