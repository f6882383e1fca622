"""The one internal representation every wire converter reads and writes.

A converter per wire API turns that API's request into a :class:`Request`, a :class:`Request`
into that API's request, a response or stream of that API into :class:`Response` / stream
events, and back: 2 × 4 converters, never one per pair.

Stream events follow one discipline whatever the source: ``Start``, then blocks (``BlockStart``,
``Delta``…, ``BlockStop``; one block open at a time, indices counting from 0), then ``Finish``;
or a ``Failure`` at any point, which ends the stream.

Reasoning signatures: a :class:`Thinking` keeps the opaque ``signature`` of the API that produced
it and that API's name in ``origin``. Only that API can verify it, so a converter for another API
either carries it in an envelope (:func:`wrap_signature`) so it comes back on the next turn, or
drops the block when it has to build a request for an API that would reject it.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Literal

import msgspec

Wire = Literal["anthropic", "openai-chat", "openai-responses", "google"]
"""A wire API the proxy speaks, inbound or outbound.

- ``anthropic``: Anthropic Messages (``/v1/messages``).
- ``openai-chat``: OpenAI Chat Completions (``/v1/chat/completions``).
- ``openai-responses``: OpenAI Responses (``/v1/responses``).
- ``google``: Google GenerateContent (``/v1beta/models/{model}:generateContent``).
"""

WIRES: tuple[Wire, ...] = ("anthropic", "openai-chat", "openai-responses", "google")

StopReason = Literal["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal"]
"""Why generation stopped (Anthropic's vocabulary, the richest of the four)."""

ErrorKind = Literal[
    "bad_request",
    "auth",
    "permission",
    "not_found",
    "too_large",
    "rate_limit",
    "server",
    "overloaded",
    "timeout",
    "disconnect",
]
"""A failure class every wire API can name in its own error shape."""


class Text(msgspec.Struct, frozen=True, tag="text"):
    text: str


class Image(msgspec.Struct, frozen=True, tag="image"):
    media_type: str = "image/png"
    data: str | None = None
    """Base64 bytes; exactly one of ``data`` and ``url`` is set."""
    url: str | None = None


class Thinking(msgspec.Struct, frozen=True, tag="thinking"):
    text: str = ""
    signature: str | None = None
    origin: Wire | None = None
    """The wire API whose ``signature`` this is (None: unsigned reasoning text)."""
    redacted: bool = False
    """Anthropic ``redacted_thinking``: ``signature`` holds its ``data``, ``text`` is empty."""


class ToolUse(msgspec.Struct, frozen=True, tag="tool_use"):
    id: str
    name: str
    arguments: dict[str, Any] = msgspec.field(default_factory=dict)
    signature: str | None = None
    """Google ``thoughtSignature`` attached to the call part (replayed only to Google)."""


class ToolResult(msgspec.Struct, frozen=True, tag="tool_result"):
    tool_use_id: str
    content: list[Text | Image] = msgspec.field(default_factory=list)
    is_error: bool = False
    name: str | None = None
    """The tool's name when the source API gave it (Google needs it)."""

    def text(self) -> str:
        return "\n".join(p.text for p in self.content if isinstance(p, Text))


Part = Text | Image | Thinking | ToolUse | ToolResult


class Message(msgspec.Struct):
    role: Literal["user", "assistant"]
    content: list[Part] = msgspec.field(default_factory=list)


class Tool(msgspec.Struct, frozen=True):
    name: str
    description: str = ""
    schema: dict[str, Any] = msgspec.field(default_factory=lambda: {"type": "object"})
    freeform: bool = False
    """An OpenAI ``custom`` tool (raw text input); elsewhere a function taking ``{"input": str}``."""


ToolChoice = Literal["auto", "any", "none"] | str
"""``auto``, ``any`` (some tool), ``none``, or a tool name that must be called."""


class Usage(msgspec.Struct):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    def merge(self, other: Usage) -> Usage:
        """Field-wise max: streams report running totals, sometimes in pieces."""
        return Usage(
            max(self.input_tokens, other.input_tokens),
            max(self.output_tokens, other.output_tokens),
            max(self.cache_read_tokens, other.cache_read_tokens),
            max(self.cache_write_tokens, other.cache_write_tokens),
            max(self.reasoning_tokens, other.reasoning_tokens),
        )


class Request(msgspec.Struct):
    model: str
    messages: list[Message] = msgspec.field(default_factory=list)
    system: str = ""
    tools: list[Tool] = msgspec.field(default_factory=list)
    tool_choice: ToolChoice | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop: list[str] = msgspec.field(default_factory=list)
    stream: bool = False
    thinking_budget: int | None = None
    """Reasoning requested (a token budget; 0 = on, budget unknown)."""
    parallel_tool_calls: bool | None = None
    json_schema: dict[str, Any] | None = None
    """A JSON answer demanded: its schema, or ``{}`` for any JSON object."""
    dropped: list[str] = msgspec.field(default_factory=list)
    """Vendor parameters the inbound converter did not carry over (logged at debug)."""


class Response(msgspec.Struct):
    id: str
    model: str
    content: list[Part] = msgspec.field(default_factory=list)
    stop_reason: StopReason = "end_turn"
    usage: Usage = msgspec.field(default_factory=Usage)


class ErrorInfo(msgspec.Struct, frozen=True):
    """An upstream (or proxy) failure, rendered by each inbound converter in its own shape."""

    kind: ErrorKind
    message: str
    status: int = 500
    retry_after: float | None = None


# ---- stream events --------------------------------------------------------------------------


class Start(msgspec.Struct, frozen=True, tag="start"):
    id: str
    model: str
    usage: Usage | None = None


class BlockStart(msgspec.Struct, frozen=True, tag="block_start"):
    index: int
    block: Text | Thinking | ToolUse
    """The block's header: empty text, unsigned thinking, or a tool call without arguments."""


class Delta(msgspec.Struct, frozen=True, tag="delta"):
    index: int
    kind: Literal["text", "thinking", "signature", "arguments"]
    value: str


class BlockStop(msgspec.Struct, frozen=True, tag="block_stop"):
    index: int


class Finish(msgspec.Struct, frozen=True, tag="finish"):
    stop_reason: StopReason
    usage: Usage


class Failure(msgspec.Struct, frozen=True, tag="failure"):
    error: ErrorInfo


Event = Start | BlockStart | Delta | BlockStop | Finish | Failure


# ---- signatures ---------------------------------------------------------------------------

_ENVELOPE = "corral1."


def wrap_signature(origin: Wire | None, signature: str | None) -> str:
    """An opaque string a client of another API hands back unchanged on its next turn."""
    raw = json.dumps({"o": origin, "s": signature}, separators=(",", ":"))
    return _ENVELOPE + base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def unwrap_signature(value: str | None, own: Wire) -> tuple[Wire | None, str | None]:
    """(origin, signature) of a signature a client sent back; own-API signatures pass as is."""
    if not value:
        return None, None
    if not value.startswith(_ENVELOPE):
        return own, value
    body = value[len(_ENVELOPE) :]
    try:
        data = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        origin = data.get("o")
        signature = data.get("s")
    except (ValueError, AttributeError):
        return None, None
    if origin not in WIRES or not isinstance(signature, str):
        return None, None
    return origin, signature


def signature_for(thinking: Thinking, client: Wire) -> str | None:
    """The signature to show a client of ``client`` for a thinking block."""
    if thinking.origin == client:
        return thinking.signature
    if thinking.origin is None or thinking.signature is None:
        return None
    return wrap_signature(thinking.origin, thinking.signature)


def native_signature(thinking: Thinking, target: Wire) -> str | None:
    """The signature to send ``target``, or None when it is not ``target``'s own."""
    return thinking.signature if thinking.origin == target else None


# ---- events ↔ response ----------------------------------------------------------------------


def response_events(response: Response) -> list[Event]:
    """The stream a complete response would have produced (a non-streaming upstream, streamed)."""
    events: list[Event] = [Start(response.id, response.model, response.usage)]
    for index, part in enumerate(p for p in response.content if not isinstance(p, ToolResult)):
        if isinstance(part, Text):
            events += [BlockStart(index, Text("")), Delta(index, "text", part.text)]
        elif isinstance(part, Thinking):
            events.append(BlockStart(index, Thinking(origin=part.origin, redacted=part.redacted)))
            if part.text:
                events.append(Delta(index, "thinking", part.text))
            if part.signature:
                events.append(Delta(index, "signature", part.signature))
        elif isinstance(part, ToolUse):
            events.append(BlockStart(index, ToolUse(part.id, part.name, signature=part.signature)))
            events.append(Delta(index, "arguments", json.dumps(part.arguments)))
        else:
            continue
        events.append(BlockStop(index))
    events.append(Finish(response.stop_reason, response.usage))
    return events


class Collector:
    """Builds a :class:`Response` from stream events (a streaming upstream, answered whole)."""

    def __init__(self) -> None:
        self.id = ""
        self.model = ""
        self.usage = Usage()
        self.stop_reason: StopReason = "end_turn"
        self.error: ErrorInfo | None = None
        self._blocks: dict[int, list[Any]] = {}
        self._order: list[int] = []

    def feed(self, event: Event) -> None:
        if isinstance(event, Start):
            self.id, self.model = event.id, event.model
            if event.usage is not None:
                self.usage = self.usage.merge(event.usage)
        elif isinstance(event, BlockStart):
            self._blocks[event.index] = [event.block, []]
            self._order.append(event.index)
        elif isinstance(event, Delta) and event.index in self._blocks:
            self._blocks[event.index][1].append(event)
        elif isinstance(event, Finish):
            self.stop_reason = event.stop_reason
            self.usage = self.usage.merge(event.usage)
        elif isinstance(event, Failure):
            self.error = event.error

    def response(self) -> Response:
        content: list[Part] = []
        for index in self._order:
            block, deltas = self._blocks[index]
            content.append(_complete(block, deltas))
        return Response(self.id, self.model, content, self.stop_reason, self.usage)


def _complete(block: Text | Thinking | ToolUse, deltas: list[Delta]) -> Part:
    def joined(kind: str) -> str:
        return "".join(d.value for d in deltas if d.kind == kind)

    if isinstance(block, Text):
        return Text(block.text + joined("text"))
    if isinstance(block, Thinking):
        signature = joined("signature") or block.signature
        return Thinking(block.text + joined("thinking"), signature, block.origin, block.redacted)
    return ToolUse(block.id, block.name, parse_arguments(joined("arguments")), block.signature)


def parse_arguments(raw: Any) -> dict[str, Any]:
    """Tool-call arguments as an object, whatever the upstream sent (never raises)."""
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str) or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {"_raw": raw}
    return value if isinstance(value, dict) else {"_value": value}
