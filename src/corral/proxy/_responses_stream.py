"""OpenAI Responses streams: upstream SSE events → stream events, and back for a client.

Split from ``_responses`` (requests, whole responses, errors), whose helpers it uses.
"""

from __future__ import annotations

import json
from typing import Any

from . import _ir as ir
from ._common import error_from_status, error_message, mint
from ._responses import (
    WIRE,
    _client_item,
    _item_part,
    _own_signature,
    _parts,
    _response,
    _stop,
    _usage,
    stream_error,
)
from ._sse import dumps, frame, loads_object


class Decoder:
    """Responses SSE events (from an upstream) → stream events."""

    def __init__(self) -> None:
        self._index = -1
        self._by_output: dict[int, int] = {}
        self._kinds: dict[int, str] = {}
        self._tools = False
        self._done = False

    def _open(self, output_index: int, item: dict[str, Any]) -> list[ir.Event]:
        kind = str(item.get("type"))
        block: ir.Text | ir.Thinking | ir.ToolUse
        if kind == "reasoning":
            block = ir.Thinking(origin=WIRE)
        elif kind in ("function_call", "custom_tool_call"):
            self._tools = True
            block = ir.ToolUse(str(item.get("call_id") or mint("call_")), str(item.get("name")))
        elif kind == "message":
            block = ir.Text("")
        else:
            return []
        self._index += 1
        self._by_output[output_index] = self._index
        self._kinds[self._index] = kind
        return [ir.BlockStart(self._index, block)]

    def feed(self, event: str, data: str) -> list[ir.Event]:
        obj = loads_object(data)
        if obj is None or self._done:
            return []
        kind = str(obj.get("type") or event)
        output_index = obj.get("output_index")
        index = self._by_output.get(output_index if isinstance(output_index, int) else -1)
        if kind == "response.created":
            response = obj.get("response") or {}
            return [
                ir.Start(str(response.get("id") or mint("resp_")), str(response.get("model") or ""))
            ]
        if kind == "response.output_item.added":
            return self._open(int(output_index or 0), obj.get("item") or {})
        if index is not None and kind == "response.output_text.delta":
            return [ir.Delta(index, "text", str(obj.get("delta", "")))]
        if index is not None and kind in (
            "response.reasoning_summary_text.delta",
            "response.reasoning_text.delta",
        ):
            return [ir.Delta(index, "thinking", str(obj.get("delta", "")))]
        if index is not None and kind == "response.function_call_arguments.delta":
            return [ir.Delta(index, "arguments", str(obj.get("delta", "")))]
        if kind == "response.output_item.done":
            return self._close(int(output_index or 0), obj.get("item") or {})
        if kind in ("response.completed", "response.incomplete"):
            self._done = True
            response = obj.get("response") or {}
            stop = "tool_use" if self._tools else _stop(response, [])
            return [ir.Finish(stop, _usage(response.get("usage")))]
        if kind in ("response.failed", "error"):
            self._done = True
            err = (obj.get("response") or {}).get("error") or obj.get("error") or obj
            code = str(err.get("code")) if isinstance(err, dict) else ""
            status = {"rate_limit_exceeded": 429, "server_is_overloaded": 503}.get(code, 500)
            return [
                ir.Failure(
                    error_from_status(status, error_message({"error": err}, "stream failed"))
                )
            ]
        return []

    def _close(self, output_index: int, item: dict[str, Any]) -> list[ir.Event]:
        out: list[ir.Event] = []
        index = self._by_output.get(output_index)
        if index is None:
            # Only the finished item was sent (no .added / deltas): replay it whole.
            out += self._open(output_index, item)
            index = self._by_output.get(output_index)
            if index is None:
                return out
            part = _item_part(item) if item.get("type") != "message" else None
            if item.get("type") == "message":
                text = "".join(
                    p.text for p in _parts(item.get("content")) if isinstance(p, ir.Text)
                )
                out.append(ir.Delta(index, "text", text))
            elif isinstance(part, ir.Thinking) and part.text:
                out.append(ir.Delta(index, "thinking", part.text))
            elif isinstance(part, ir.ToolUse) and item.get("type") == "function_call":
                out.append(ir.Delta(index, "arguments", json.dumps(part.arguments)))
        kind = self._kinds.get(index)
        if kind == "reasoning":
            origin, signature = _own_signature(item)
            if signature is not None and origin == WIRE:
                out.append(ir.Delta(index, "signature", signature))
        elif kind == "custom_tool_call":
            out.append(ir.Delta(index, "arguments", dumps({"input": str(item.get("input", ""))})))
        out.append(ir.BlockStop(index))
        return out

    def finish(self) -> list[ir.Event]:
        if self._done or (self._index < 0 and not self._by_output):
            return []
        self._done = True
        return [ir.Failure(ir.ErrorInfo("disconnect", "the upstream stream ended early", 502))]


class Encoder:
    """Stream events → Responses SSE events (to a client)."""

    def __init__(self, model: str, request: ir.Request) -> None:
        self.model = model
        self.id = mint("resp_")
        self._seq = 0
        self._freeform = frozenset(t.name for t in request.tools if t.freeform)
        self._output: list[dict[str, Any]] = []
        self._block: ir.Text | ir.Thinking | ir.ToolUse | None = None
        self._item: dict[str, Any] = {}
        self._buffer: list[str] = []
        self._signature = ""

    def _emit(self, kind: str, **data: Any) -> bytes:
        self._seq += 1
        return frame({"type": kind, "sequence_number": self._seq} | data, kind)

    def encode(self, event: ir.Event) -> bytes:
        if isinstance(event, ir.Start):
            pending = _response(self.id, self.model, [], None, "in_progress")
            return self._emit("response.created", response=pending) + self._emit(
                "response.in_progress", response=pending
            )
        if isinstance(event, ir.BlockStart):
            self._block, self._buffer, self._signature = event.block, [], ""
            item = _client_item(event.block, self._freeform, done=False) or {}
            self._item = item
            out = self._emit(
                "response.output_item.added", output_index=len(self._output), item=item
            )
            if isinstance(event.block, ir.Text):
                part = {"type": "output_text", "text": "", "annotations": []}
                out += self._emit(
                    "response.content_part.added",
                    item_id=item["id"],
                    output_index=len(self._output),
                    content_index=0,
                    part=part,
                )
            return out
        if isinstance(event, ir.Delta):
            return self._delta(event)
        if isinstance(event, ir.BlockStop):
            return self._stop()
        if isinstance(event, ir.Finish):
            status = "incomplete" if event.stop_reason == "max_tokens" else "completed"
            done = _response(self.id, self.model, self._output, event.usage, status)
            return self._emit("response.completed", response=done)
        return stream_error(event.error, self.id, self._seq + 1)

    def _delta(self, event: ir.Delta) -> bytes:
        ids = {"item_id": self._item.get("id"), "output_index": len(self._output)}
        if event.kind == "signature":
            self._signature += event.value
            return b""
        self._buffer.append(event.value)
        if event.kind == "text":
            return self._emit(
                "response.output_text.delta", **ids, content_index=0, delta=event.value
            )
        if event.kind == "thinking":
            return self._emit(
                "response.reasoning_summary_text.delta", **ids, summary_index=0, delta=event.value
            )
        if isinstance(self._block, ir.ToolUse) and self._block.name in self._freeform:
            return b""  # the raw input is only known once the JSON wrapper is complete
        return self._emit("response.function_call_arguments.delta", **ids, delta=event.value)

    def _stop(self) -> bytes:
        block, joined = self._block, "".join(self._buffer)
        ids = {"item_id": self._item.get("id"), "output_index": len(self._output)}
        out = b""
        part: ir.Part
        if isinstance(block, ir.Text):
            part = ir.Text(joined)
            out += self._emit("response.output_text.done", **ids, content_index=0, text=joined)
            done_part = {"type": "output_text", "text": joined, "annotations": []}
            out += self._emit("response.content_part.done", **ids, content_index=0, part=done_part)
        elif isinstance(block, ir.Thinking):
            part = ir.Thinking(joined, self._signature or None, block.origin)
        elif isinstance(block, ir.ToolUse):
            part = ir.ToolUse(block.id, block.name, ir.parse_arguments(joined))
            if block.name not in self._freeform:
                out += self._emit("response.function_call_arguments.done", **ids, arguments=joined)
        else:
            return b""
        item = _client_item(part, self._freeform) or {}
        if not (isinstance(part, ir.Thinking) and part.origin == WIRE):
            item["id"] = self._item.get("id")
        self._output.append(item)
        self._block = None
        return out + self._emit(
            "response.output_item.done", output_index=ids["output_index"], item=item
        )
