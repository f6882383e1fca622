"""Google GenerateContent ⇄ the internal representation (inbound and outbound).

Google has no tool-call ids in older models and names tool results by function name, so ids are
minted when missing and a result's name is looked up from the call it answers. A thought part's
``thoughtSignature`` is the signature of origin ``google``; one on a ``functionCall`` part rides on
the :class:`ToolUse`. Arguments arrive whole (Google does not stream them): a streaming client
gets them as one delta.
"""

from __future__ import annotations

from typing import Any

from . import _ir as ir
from ._common import clean_schema, drop_unknown, error_from_status, error_message, mint
from ._sse import dumps, frame, loads_object

WIRE: ir.Wire = "google"
_KNOWN = frozenset(
    {
        "contents",
        "systemInstruction",
        "system_instruction",
        "tools",
        "toolConfig",
        "generationConfig",
        "model",
    }
)
_FINISH: dict[str, ir.StopReason] = {
    "STOP": "end_turn",
    "MAX_TOKENS": "max_tokens",
    "SAFETY": "refusal",
    "RECITATION": "refusal",
    "PROHIBITED_CONTENT": "refusal",
}
STATUS_NAMES = {
    "bad_request": "INVALID_ARGUMENT",
    "auth": "UNAUTHENTICATED",
    "permission": "PERMISSION_DENIED",
    "not_found": "NOT_FOUND",
    "too_large": "INVALID_ARGUMENT",
    "rate_limit": "RESOURCE_EXHAUSTED",
    "server": "INTERNAL",
    "overloaded": "UNAVAILABLE",
    "timeout": "DEADLINE_EXCEEDED",
    "disconnect": "UNAVAILABLE",
}
_STATUS = {"overloaded": 503, "timeout": 504, "disconnect": 503}
_LEVELS = {"LOW": 2048, "MEDIUM": 8192, "HIGH": 24576}


def _lower_types(schema: Any, depth: int = 0) -> Any:
    """Google's OpenAPI-style schemas spell types in capitals; JSON Schema wants lower case."""
    if depth > 64:
        return {}
    if isinstance(schema, dict):
        out = {k: _lower_types(v, depth + 1) for k, v in schema.items()}
        if isinstance(out.get("type"), str):
            out["type"] = out["type"].lower()
        return out
    if isinstance(schema, list):
        return [_lower_types(v, depth + 1) for v in schema]
    return schema


def parse_request(body: dict[str, Any], model: str = "", stream: bool = False) -> ir.Request:
    system_raw = body.get("systemInstruction") or body.get("system_instruction")
    system = ""
    if isinstance(system_raw, dict):
        system = "\n".join(
            str(p.get("text", "")) for p in system_raw.get("parts") or [] if isinstance(p, dict)
        )
    elif isinstance(system_raw, str):
        system = system_raw
    messages: list[ir.Message] = []
    names: dict[str, list[str]] = {}
    for content in body.get("contents") or []:
        if isinstance(content, dict):
            messages.append(_parse_content(content, names))
    tools: list[ir.Tool] = []
    for group in body.get("tools") or []:
        for decl in (group or {}).get("functionDeclarations") or []:
            if isinstance(decl, dict) and "name" in decl:
                schema = (
                    decl.get("parametersJsonSchema") or _lower_types(decl.get("parameters")) or {}
                )
                tools.append(ir.Tool(str(decl["name"]), str(decl.get("description") or ""), schema))
    config = body.get("generationConfig") or {}
    thinking = config.get("thinkingConfig") or {}
    budget = None
    if isinstance(thinking, dict) and (
        thinking.get("includeThoughts") or thinking.get("thinkingBudget")
    ):
        raw_budget = thinking.get("thinkingBudget")
        budget = (
            raw_budget
            if isinstance(raw_budget, int) and raw_budget > 0
            else _LEVELS.get(str(thinking.get("thinkingLevel")), 0)
        )
    json_schema = None
    if config.get("responseMimeType") == "application/json":
        json_schema = _lower_types(
            config.get("responseJsonSchema") or config.get("responseSchema") or {}
        )
    mode = ((body.get("toolConfig") or {}).get("functionCallingConfig") or {}).get("mode")
    stop = config.get("stopSequences")
    return ir.Request(
        model=model,
        messages=messages,
        system=system,
        tools=tools,
        tool_choice={"ANY": "any", "NONE": "none", "AUTO": "auto"}.get(str(mode)),
        max_tokens=config.get("maxOutputTokens"),
        temperature=config.get("temperature"),
        top_p=config.get("topP"),
        stop=[str(s) for s in stop] if isinstance(stop, list) else [],
        stream=stream,
        thinking_budget=budget,
        json_schema=json_schema,
        dropped=drop_unknown(body, _KNOWN, WIRE),
    )


def _parse_content(content: dict[str, Any], names: dict[str, list[str]]) -> ir.Message:
    """``names`` maps a function name to the ids minted for its calls, oldest first."""
    role: Any = "assistant" if content.get("role") == "model" else "user"
    parts: list[ir.Part] = []
    for part in content.get("parts") or []:
        if not isinstance(part, dict):
            continue
        signature = part.get("thoughtSignature")
        if "functionCall" in part:
            call = part["functionCall"] or {}
            name = str(call.get("name") or "")
            call_id = str(call.get("id") or mint("call_"))
            names.setdefault(name, []).append(call_id)
            parts.append(ir.ToolUse(call_id, name, ir.parse_arguments(call.get("args")), signature))
        elif "functionResponse" in part:
            response = part["functionResponse"] or {}
            name = str(response.get("name") or "")
            pending = names.get(name) or []
            call_id = str(response.get("id") or (pending.pop(0) if pending else name))
            value = response.get("response")
            if isinstance(value, dict) and set(value) <= {"output", "error", "content"}:
                text = value.get("output", value.get("content", value.get("error", "")))
                content_parts: list[ir.Text | ir.Image] = [
                    ir.Text(text if isinstance(text, str) else dumps(text))
                ]
            else:
                content_parts = [ir.Text(dumps(value))]
            is_error = isinstance(value, dict) and "error" in value and "output" not in value
            parts.append(ir.ToolResult(call_id, content_parts, is_error, name))
        elif part.get("thought") and "text" in part:
            origin, own = ir.unwrap_signature(signature, WIRE)
            parts.append(ir.Thinking(str(part["text"]), own, origin))
        elif "text" in part:
            if signature:
                origin, own = ir.unwrap_signature(signature, WIRE)
                parts.append(ir.Thinking("", own, origin))
            parts.append(ir.Text(str(part["text"])))
        elif "inlineData" in part:
            data = part["inlineData"] or {}
            parts.append(
                ir.Image(str(data.get("mimeType", "image/png")), str(data.get("data", "")))
            )
        elif "fileData" in part:
            data = part["fileData"] or {}
            parts.append(
                ir.Image(str(data.get("mimeType", "image/png")), url=str(data.get("fileUri", "")))
            )
    return ir.Message(role, parts)


def build_request(req: ir.Request, model: str) -> dict[str, Any]:
    names = {p.id: p.name for m in req.messages for p in m.content if isinstance(p, ir.ToolUse)}
    contents = [_render_message(m, names) for m in req.messages]
    body: dict[str, Any] = {"contents": [c for c in contents if c["parts"]]}
    if req.system:
        body["systemInstruction"] = {"parts": [{"text": req.system}]}
    if req.tools:
        body["tools"] = [
            {
                "functionDeclarations": [
                    {
                        "name": t.name,
                        "description": t.description,
                        "parametersJsonSchema": clean_schema(t.schema, WIRE),
                    }
                    for t in req.tools
                ]
            }
        ]
        if req.tool_choice:
            mode = {"auto": "AUTO", "any": "ANY", "none": "NONE"}.get(req.tool_choice)
            config: dict[str, Any] = {"mode": mode or "ANY"}
            if mode is None:
                config["allowedFunctionNames"] = [req.tool_choice]
            body["toolConfig"] = {"functionCallingConfig": config}
    generation: dict[str, Any] = {}
    if req.max_tokens:
        generation["maxOutputTokens"] = req.max_tokens
    if req.temperature is not None:
        generation["temperature"] = req.temperature
    if req.top_p is not None:
        generation["topP"] = req.top_p
    if req.stop:
        generation["stopSequences"] = req.stop
    if req.thinking_budget is not None:
        generation["thinkingConfig"] = {"includeThoughts": True}
        if req.thinking_budget:
            generation["thinkingConfig"]["thinkingBudget"] = req.thinking_budget
    if req.json_schema is not None:
        generation["responseMimeType"] = "application/json"
        if req.json_schema:
            generation["responseJsonSchema"] = req.json_schema
    if generation:
        body["generationConfig"] = generation
    return body


def _render_message(message: ir.Message, names: dict[str, str]) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, ir.Text):
            if part.text:
                parts.append({"text": part.text})
        elif isinstance(part, ir.Image):
            if part.data is not None:
                parts.append({"inlineData": {"mimeType": part.media_type, "data": part.data}})
            else:
                parts.append({"fileData": {"mimeType": part.media_type, "fileUri": part.url}})
        elif isinstance(part, ir.Thinking):
            # Only Google's own signed thoughts go back; it ignores or refuses anything else.
            signature = ir.native_signature(part, WIRE)
            if signature:
                parts.append({"text": part.text, "thought": True, "thoughtSignature": signature})
        elif isinstance(part, ir.ToolUse):
            call: dict[str, Any] = {
                "functionCall": {"id": part.id, "name": part.name, "args": part.arguments}
            }
            if part.signature:
                call["thoughtSignature"] = part.signature
            parts.append(call)
        elif isinstance(part, ir.ToolResult):
            key = "error" if part.is_error else "output"
            name = part.name or names.get(part.tool_use_id, part.tool_use_id)
            response = {"id": part.tool_use_id, "name": name, "response": {key: part.text()}}
            parts.append({"functionResponse": response})
            for image in (p for p in part.content if isinstance(p, ir.Image) and p.data):
                parts.append({"inlineData": {"mimeType": image.media_type, "data": image.data}})
    return {"role": "model" if message.role == "assistant" else "user", "parts": parts}


# ---- responses ---------------------------------------------------------------------------


def _usage(raw: Any) -> ir.Usage:
    if not isinstance(raw, dict):
        return ir.Usage()
    return ir.Usage(
        input_tokens=int(raw.get("promptTokenCount") or 0),
        output_tokens=int(raw.get("candidatesTokenCount") or 0)
        + int(raw.get("thoughtsTokenCount") or 0),
        cache_read_tokens=int(raw.get("cachedContentTokenCount") or 0),
        reasoning_tokens=int(raw.get("thoughtsTokenCount") or 0),
    )


def _render_usage(usage: ir.Usage) -> dict[str, int]:
    return {
        "promptTokenCount": usage.input_tokens,
        "candidatesTokenCount": usage.output_tokens,
        "totalTokenCount": usage.input_tokens + usage.output_tokens,
    }


def _candidate(body: dict[str, Any]) -> dict[str, Any]:
    candidates = body.get("candidates") or [{}]
    return candidates[0] if isinstance(candidates[0], dict) else {}


def parse_response(body: dict[str, Any]) -> ir.Response:
    candidate = _candidate(body)
    message = _parse_content(candidate.get("content") or {"role": "model"}, {})
    stop = _FINISH.get(str(candidate.get("finishReason")), "end_turn")
    if any(isinstance(p, ir.ToolUse) for p in message.content):
        stop = "tool_use"
    return ir.Response(
        id=str(body.get("responseId") or mint("gen-")),
        model=str(body.get("modelVersion") or ""),
        content=message.content,
        stop_reason=stop,
        usage=_usage(body.get("usageMetadata")),
    )


def _client_part(part: ir.Part) -> dict[str, Any] | None:
    if isinstance(part, ir.Text):
        return {"text": part.text}
    if isinstance(part, ir.Thinking):
        out: dict[str, Any] = {"text": part.text, "thought": True}
        signature = ir.signature_for(part, WIRE)
        if signature:
            out["thoughtSignature"] = signature
        return out
    if isinstance(part, ir.ToolUse):
        call: dict[str, Any] = {
            "functionCall": {"id": part.id, "name": part.name, "args": part.arguments}
        }
        if part.signature:
            call["thoughtSignature"] = part.signature
        return call
    return None


def _finish_reason(stop: ir.StopReason) -> str:
    return {"max_tokens": "MAX_TOKENS", "refusal": "SAFETY"}.get(stop, "STOP")


def render_response(resp: ir.Response, model: str) -> dict[str, Any]:
    parts = [p for p in map(_client_part, resp.content) if p is not None]
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": parts},
                "finishReason": _finish_reason(resp.stop_reason),
                "index": 0,
            }
        ],
        "usageMetadata": _render_usage(resp.usage),
        "modelVersion": model,
        "responseId": resp.id,
    }


# ---- streams -----------------------------------------------------------------------------


class Decoder:
    """Google SSE chunks (each a whole ``GenerateContentResponse``) → stream events."""

    def __init__(self) -> None:
        self._started = False
        self._index = -1
        self._open: str | None = None
        self._tools = False
        self._done = False
        self._usage = ir.Usage()
        self._stop: ir.StopReason | None = None

    def _switch(self, kind: str, block: ir.Text | ir.Thinking) -> list[ir.Event]:
        if self._open == kind:
            return []
        out: list[ir.Event] = [] if self._open is None else [ir.BlockStop(self._index)]
        self._index += 1
        self._open = kind
        return [*out, ir.BlockStart(self._index, block)]

    def _close(self) -> list[ir.Event]:
        if self._open is None:
            return []
        self._open = None
        return [ir.BlockStop(self._index)]

    def feed(self, event: str, data: str) -> list[ir.Event]:
        obj = loads_object(data)
        if obj is None or self._done:
            return []
        if isinstance(obj.get("error"), dict):
            self._done = True
            err = obj["error"]
            status = err.get("code") if isinstance(err.get("code"), int) else 500
            return [
                *self._close(),
                ir.Failure(error_from_status(status, error_message(obj, "stream error"))),
            ]
        out: list[ir.Event] = []
        # Gemini may put usageMetadata (promptTokenCount) on the first chunk: Start carries it.
        if isinstance(obj.get("usageMetadata"), dict):
            self._usage = self._usage.merge(_usage(obj["usageMetadata"]))
        if not self._started:
            self._started = True
            out.append(
                ir.Start(
                    str(obj.get("responseId") or mint("gen-")),
                    str(obj.get("modelVersion") or ""),
                    self._usage,
                )
            )
        candidate = _candidate(obj)
        for part in (candidate.get("content") or {}).get("parts") or []:
            if not isinstance(part, dict):
                continue
            signature = part.get("thoughtSignature")
            if "functionCall" in part:
                out += self._close()
                call = part["functionCall"] or {}
                self._tools = True
                self._index += 1
                header = ir.ToolUse(
                    str(call.get("id") or mint("call_")),
                    str(call.get("name") or ""),
                    signature=signature,
                )
                out += [
                    ir.BlockStart(self._index, header),
                    ir.Delta(self._index, "arguments", dumps(ir.parse_arguments(call.get("args")))),
                    ir.BlockStop(self._index),
                ]
            elif part.get("thought") and "text" in part:
                out += self._switch("thinking", ir.Thinking(origin=WIRE))
                if part["text"]:
                    out.append(ir.Delta(self._index, "thinking", str(part["text"])))
                if signature:
                    out.append(ir.Delta(self._index, "signature", str(signature)))
            elif "text" in part:
                if signature and self._open == "thinking":
                    out.append(ir.Delta(self._index, "signature", str(signature)))
                if part["text"]:
                    out += self._switch("text", ir.Text(""))
                    out.append(ir.Delta(self._index, "text", str(part["text"])))
        if candidate.get("finishReason"):
            self._stop = _FINISH.get(str(candidate["finishReason"]), "end_turn")
        return out

    def finish(self) -> list[ir.Event]:
        if self._done or not self._started:
            return []
        self._done = True
        out = self._close()
        if self._stop is None:
            return [
                *out,
                ir.Failure(ir.ErrorInfo("disconnect", "the upstream stream ended early", 503)),
            ]
        stop: ir.StopReason = "tool_use" if self._tools else self._stop
        return [*out, ir.Finish(stop, self._usage)]


class Encoder:
    """Stream events → Google SSE chunks (to a client). Tool calls go out whole, at their end."""

    def __init__(self, model: str, request: ir.Request) -> None:
        self.model = model
        self.id = mint("")
        self._block: ir.Text | ir.Thinking | ir.ToolUse | None = None
        self._args: list[str] = []
        self._signature = ""

    def _chunk(
        self, parts: list[dict[str, Any]], finish: str | None = None, usage: ir.Usage | None = None
    ) -> bytes:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        body: dict[str, Any] = {
            "candidates": [candidate],
            "modelVersion": self.model,
            "responseId": self.id,
        }
        if finish:
            candidate["finishReason"] = finish
        if usage is not None:
            body["usageMetadata"] = _render_usage(usage)
        return frame(body)

    def encode(self, event: ir.Event) -> bytes:
        if isinstance(event, ir.BlockStart):
            self._block, self._args, self._signature = event.block, [], ""
            return b""
        if isinstance(event, ir.Delta):
            if event.kind == "text":
                return self._chunk([{"text": event.value}])
            if event.kind == "thinking":
                return self._chunk([{"text": event.value, "thought": True}])
            if event.kind == "signature":
                self._signature += event.value
            else:
                self._args.append(event.value)
            return b""
        if isinstance(event, ir.BlockStop):
            block = self._block
            self._block = None
            if isinstance(block, ir.ToolUse):
                part = _client_part(
                    ir.ToolUse(
                        block.id,
                        block.name,
                        ir.parse_arguments("".join(self._args)),
                        block.signature,
                    )
                )
                return self._chunk([part] if part else [])
            if isinstance(block, ir.Thinking) and self._signature:
                signature = ir.signature_for(
                    ir.Thinking(signature=self._signature, origin=block.origin), WIRE
                )
                return self._chunk([{"text": "", "thought": True, "thoughtSignature": signature}])
            return b""
        if isinstance(event, ir.Finish):
            return self._chunk([{"text": ""}], _finish_reason(event.stop_reason), event.usage)
        if isinstance(event, ir.Failure):
            return stream_error(event.error)
        return b""


# ---- errors ------------------------------------------------------------------------------


def render_error(error: ir.ErrorInfo) -> tuple[int, dict[str, Any]]:
    status = _STATUS.get(error.kind, error.status)
    return status, {
        "error": {"code": status, "message": error.message, "status": STATUS_NAMES[error.kind]}
    }


def stream_error(error: ir.ErrorInfo) -> bytes:
    return frame(render_error(error)[1])


def parse_error(status: int, body: Any, retry_after: float | None) -> ir.ErrorInfo:
    if isinstance(body, list) and body:
        body = body[0]
    kind = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        kind = {"RESOURCE_EXHAUSTED": "rate_limit", "UNAVAILABLE": "overloaded"}.get(
            str(body["error"].get("status"))
        )
    return error_from_status(
        status, error_message(body, f"upstream HTTP {status}"), retry_after, kind
    )
