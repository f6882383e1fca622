"""The wire-neutral view of one model request, shared by every wire-API module.

Each wire module (``_anthropic``, ``_responses``, ``_chat``, ``_gemini``) turns a request body into a
:class:`ParsedRequest`; the scenario engine and the request log only ever look at this view.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

WireApi = Literal["anthropic", "openai-responses", "openai-chat", "gemini"]
"""Which vendor API a request spoke.

- ``anthropic``: Anthropic Messages (``/v1/messages``).
- ``openai-responses``: OpenAI Responses (``/v1/responses``).
- ``openai-chat``: OpenAI Chat Completions (``/v1/chat/completions``).
- ``gemini``: Google Gemini (``/v1beta/models/{model}:…``).
"""

Role = Literal["system", "user", "assistant", "tool"]
"""A normalized message role: ``tool`` carries one tool result."""


class ToolInfo(msgspec.Struct, frozen=True):
    """One tool the client advertised."""

    name: str
    schema: dict[str, Any] = msgspec.field(default_factory=dict)
    """JSON Schema of the arguments (empty for freeform/custom tools)."""
    freeform: bool = False
    """True for OpenAI ``custom`` tools, whose input is a raw string rather than JSON."""
    namespace: str | None = None
    """Codex "responses-lite" namespace the tool was grouped in, if any."""


class ToolCall(msgspec.Struct, frozen=True):
    """A tool call found in the conversation (an earlier assistant turn)."""

    id: str
    name: str
    arguments: Any = None


class Message(msgspec.Struct, frozen=True):
    """One normalized conversation entry.

    ``tool`` messages carry a single tool result (``tool_call_id`` and its text in ``text``).
    """

    role: Role
    text: str = ""
    tool_calls: list[ToolCall] = msgspec.field(default_factory=list)
    tool_call_id: str | None = None
    has_image: bool = False


class ParsedRequest(msgspec.Struct):
    """Everything the fake needs to know about one generation request."""

    wire_api: WireApi
    model: str = ""
    stream: bool = False
    system: str = ""
    messages: list[Message] = msgspec.field(default_factory=list)
    tools: list[ToolInfo] = msgspec.field(default_factory=list)
    json_schema: dict[str, Any] | None = None
    """The schema of a demanded JSON answer; ``{}`` when JSON is demanded without a schema."""
    include_usage: bool = True
    """Chat Completions only sends a usage chunk when ``stream_options.include_usage`` is set."""

    @property
    def has_tools(self) -> bool:
        return bool(self.tools)

    @property
    def wants_json(self) -> bool:
        return self.json_schema is not None

    @property
    def tool_results(self) -> list[str]:
        return [m.text for m in self.messages if m.role == "tool"]

    @property
    def last_is_tool_result(self) -> bool:
        for message in reversed(self.messages):
            if message.role == "system":
                continue
            return message.role == "tool"
        return False

    @property
    def last_tool_results(self) -> list[str]:
        """The tool results at the end of the conversation (the ones this reply answers)."""
        out: list[str] = []
        for message in reversed(self.messages):
            if message.role == "system":
                continue
            if message.role != "tool":
                break
            out.append(message.text)
        return list(reversed(out))

    @property
    def user_texts(self) -> list[str]:
        return [m.text for m in self.messages if m.role == "user" and m.text]

    @property
    def has_image(self) -> bool:
        return any(m.has_image for m in self.messages)

    def all_text(self) -> str:
        """System prompt plus every message text (where the CLI's working directory hides)."""
        return "\n".join([self.system, *(m.text for m in self.messages)])
