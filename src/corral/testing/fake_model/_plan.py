"""Choosing the reply: scenario step matching, fallbacks, side-request answers.

A request is *main* (a turn of the agent loop, counted) when :func:`is_main_request` says so:
it advertises tools, or — a client that edits by text and never advertises tools, such as aider —
it demands no JSON and already holds an assistant message (a conversation under way, few-shot
examples included). Everything else is a *side* request: titles (a system prompt and the user's
text, no reply yet), JSON-schema calls and routers.

The :class:`ScenarioRunner` is the only stateful piece (steps used up, main-turn counter); it is
guarded by a lock because tests swap scenarios from their own thread while the server runs.
"""

from __future__ import annotations

import json
import re
import string
import threading
from typing import Any, cast

import msgspec

from ._scenario import Capability, ErrorSpec, HoldSpec, Reply, Scenario, Step, Usage
from ._tools import CAPABILITY_TOOLS, pick_tool, resolve_call
from ._types import ParsedRequest


class PlannedToolCall(msgspec.Struct, frozen=True):
    id: str
    name: str
    arguments: Any
    """A dict for function tools, a string for freeform (custom) tools."""
    freeform: bool = False
    namespace: str | None = None

    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, separators=(",", ":"))


class Plan(msgspec.Struct):
    """One fully decided reply, independent of the wire API that will render it."""

    label: str
    text: str | None = None
    chunks: int = 1
    chunk_delay: float = 0.0
    thinking: str | None = None
    tool_calls: list[PlannedToolCall] = msgspec.field(default_factory=list)
    error: ErrorSpec | None = None
    disconnect_after: int | None = None
    hold: HoldSpec | None = None
    usage: Usage = msgspec.field(default_factory=Usage)
    serial: int = 0
    """Increasing number used to build ids (``toolu_fake_3``)."""

    @property
    def stop_for_tools(self) -> bool:
        return bool(self.tool_calls)

    def text_chunks(self) -> list[str]:
        return split_text(self.text or "", self.chunks)


def split_text(text: str, chunks: int) -> list[str]:
    """Split ``text`` into ``chunks`` non-empty pieces (fewer when the text is shorter)."""
    if not text:
        return []
    chunks = max(1, min(chunks, len(text)))
    size, extra = divmod(len(text), chunks)
    out: list[str] = []
    start = 0
    for i in range(chunks):
        end = start + size + (1 if i < extra else 0)
        out.append(text[start:end])
        start = end
    return out


def json_for_schema(schema: dict[str, Any] | None) -> Any:
    """A small value that satisfies the required keys of ``schema`` (prefers ``user`` in enums)."""
    schema = schema or {}
    if schema.get("enum"):
        options = list(schema["enum"])
        return "user" if "user" in options else options[0]
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return json_for_schema(schema[key][0])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    kind = kind.lower() if isinstance(kind, str) else ("object" if "properties" in schema else None)
    if kind == "object" or kind is None:
        props: dict[str, Any] = schema.get("properties") or {}
        required = schema.get("required") or list(props)
        return {k: json_for_schema(props.get(k) or {}) for k in required}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        minimum = schema.get("minimum")
        return minimum if isinstance(minimum, int | float) else 1
    if kind == "boolean":
        return False
    return "DONE"


def is_main_request(request: ParsedRequest) -> bool:
    """Whether ``request`` is a turn of the agent loop rather than a side request.

    Tools advertised: main. No tools: main only for a conversation under way (an assistant
    message in it) that demands no JSON; a title or router request has no assistant message yet,
    and a JSON demand is always a side call (gemini's router, qwen's next-speaker check).
    """
    if request.has_tools:
        return True
    if request.wants_json:
        return False
    return any(m.role == "assistant" for m in request.messages)


class Decision(msgspec.Struct):
    plan: Plan
    is_main: bool
    turn: int | None


class ScenarioRunner:
    def __init__(self, scenario: Scenario) -> None:
        self._lock = threading.Lock()
        self._serial = 0
        self.set(scenario)

    def set(self, scenario: Scenario) -> None:
        with self._lock:
            self.scenario = scenario
            self._used = [0] * len(scenario.steps)
            self._turn = 0

    def decide(self, request: ParsedRequest) -> Decision:
        with self._lock:
            self._serial += 1
            is_main = is_main_request(request)
            turn: int | None = None
            if is_main:
                self._turn += 1
                turn = self._turn
            step_index = self._match(request, is_main, turn)
            scenario = self.scenario
            if step_index is not None:
                self._used[step_index] += 1
                step = scenario.steps[step_index]
                label = step.name or f"step {step_index}"
                reply = step.reply
            elif not is_main:
                return Decision(plan=self._side_plan(request), is_main=False, turn=None)
            elif request.last_is_tool_result:
                label, reply = "fallback:tool-result", Reply(text="DONE")
            else:
                label, reply = "fallback:default", scenario.default
            plan = self._build(label, reply, request, scenario.cwd)
            return Decision(plan=plan, is_main=is_main, turn=turn)

    def _match(self, request: ParsedRequest, is_main: bool, turn: int | None) -> int | None:
        for index, step in enumerate(self.scenario.steps):
            if step.times is not None and self._used[index] >= step.times:
                continue
            if _matches(step, request, is_main, turn):
                return index
        return None

    def _side_plan(self, request: ParsedRequest) -> Plan:
        text = json.dumps(json_for_schema(request.json_schema)) if request.wants_json else "DONE"
        return Plan(label="side", text=text, serial=self._serial)

    def _build(self, label: str, reply: Reply, request: ParsedRequest, cwd: str | None) -> Plan:
        calls: list[PlannedToolCall] = []
        missing: list[str] = []
        for index, spec in enumerate(reply.tool_calls):
            resolved = resolve_call(spec, request, cwd)
            if resolved is None:
                missing.append(spec.capability or spec.name or "?")
                continue
            tool, arguments = resolved
            calls.append(
                PlannedToolCall(
                    id=f"{self._serial}_{index}",
                    name=tool.name,
                    arguments=arguments,
                    freeform=tool.freeform,
                    namespace=tool.namespace,
                )
            )
        text = _template(reply.text, request, self._turn if is_main_request(request) else None)
        if missing and not calls and text is None:
            text = f"fake-model: no advertised tool for {', '.join(missing)}"
        return Plan(
            label=label,
            text=text,
            chunks=reply.chunks,
            chunk_delay=reply.chunk_delay,
            thinking=reply.thinking,
            tool_calls=calls,
            error=reply.error,
            disconnect_after=reply.disconnect_after,
            hold=reply.hold,
            usage=reply.usage,
            serial=self._serial,
        )


def _template(text: str | None, request: ParsedRequest, turn: int | None) -> str | None:
    """Fill ``$user_text``, ``$tool_result`` and ``$turn`` in a reply text (others are left)."""
    if text is None or "$" not in text:
        return text
    results = request.last_tool_results
    values = {
        "user_text": request.user_texts[-1] if request.user_texts else "",
        "tool_result": results[-1] if results else "",
        "turn": "" if turn is None else str(turn),
    }
    return string.Template(text).safe_substitute(values)


def _matches(step: Step, request: ParsedRequest, is_main: bool, turn: int | None) -> bool:
    m = step.match
    if m.kind == "main" and not is_main:
        return False
    if m.kind == "side" and is_main:
        return False
    if m.wire_api is not None and request.wire_api not in m.wire_api:
        return False
    if m.has_tools is not None and m.has_tools != request.has_tools:
        return False
    if m.last_is_tool_result is not None and m.last_is_tool_result != request.last_is_tool_result:
        return False
    if m.tool_result_contains is not None and not any(
        m.tool_result_contains in r for r in request.last_tool_results
    ):
        return False
    last_user = request.user_texts[-1] if request.user_texts else ""
    if m.user_text_contains is not None and m.user_text_contains not in last_user:
        return False
    if m.user_text_regex is not None and not re.search(m.user_text_regex, last_user):
        return False
    if m.turn is not None and m.turn != turn:
        return False
    if m.model is not None and m.model not in request.model:
        return False
    return m.has_tool is None or _advertises(request, m.has_tool)


def _advertises(request: ParsedRequest, tool: str) -> bool:
    if any(t.name == tool for t in request.tools):
        return True
    if tool not in CAPABILITY_TOOLS:
        return False
    return pick_tool(cast(Capability, tool), request.tools) is not None
