"""Catalogue scenarios outside the default suite: run by name (``-s``), recorded as fixtures.

They show one protocol's behaviour (reasoning, sub-agents, a refused request) that not every
target has a reason to run on every conformance pass; ``corral conformance`` runs them only when
asked, and ``corral record AGENT all`` records them where the target can run them.
"""

from __future__ import annotations

from typing import Any

from ...events import ErrorEvent, ReasoningDelta, StopReason, ToolCallStarted
from . import _log
from ._context import Context
from ._session import expect, turn_ok

HELLO = "Hello from the scripted model."


def _delegate(tool: str, wire_apis: list[str], subagent_type: str | None) -> dict[str, Any]:
    """The first main request of the turn starts a sub-agent (tool name and types differ per CLI)."""
    arguments = {"description": "Say hi", "prompt": "Sub-agent: reply with a greeting."}
    if subagent_type:
        arguments["subagent_type"] = subagent_type
    return {
        "name": f"delegate-{tool}",
        "match": {"turn": 1, "wire_api": wire_apis},
        "reply": {"tool_calls": [{"name": tool, "arguments": arguments}]},
    }


THINKING_SCRIPT: dict[str, Any] = {
    "steps": [],
    "default": {"thinking": "Let me think about this.", "text": HELLO, "chunks": 2},
}
SUBAGENT_SCRIPT: dict[str, Any] = {
    "steps": [
        _delegate("Agent", ["anthropic"], "general-purpose"),
        # Qwen Code has no named sub-agents by default: no type = a fork of the conversation.
        _delegate("agent", ["openai-chat"], None),
        {
            "name": "sub",
            "match": {"user_text_contains": "Sub-agent"},
            "reply": {"text": "Hi from the sub-agent."},
        },
        {"name": "done", "match": {"last_is_tool_result": True}, "reply": {"text": "DONE"}},
    ],
    "default": {"text": HELLO},
}
ERROR_400_SCRIPT: dict[str, Any] = {
    "steps": [],
    "default": {"error": {"kind": "bad_request", "message": "fake-model refuses this request"}},
}


async def thinking(ctx: Context) -> None:
    async with ctx.session() as s:
        await s.send("Say hello.")
        turn = await s.turn(ctx.timeout)
    turn_ok(turn.end, "thinking")
    reasoning = "".join(e.text for e in turn.of(ReasoningDelta))
    expect("think" in reasoning, f"no reasoning reached the client ({reasoning!r})")
    expect(HELLO in turn.text, f"final text {turn.text!r} lacks {HELLO!r}")


async def subagent(ctx: Context) -> None:
    async with ctx.session() as s:
        await s.send("Delegate a greeting.")
        turn = await s.turn(ctx.timeout)
    turn_ok(turn.end, "subagent")
    expect(turn.of(ToolCallStarted), "no tool call started the sub-agent")
    expect(_log.any_main_carries(ctx.server, "Sub-agent"), "the sub-agent never asked the model")
    expect(_log.saw_tool_result(ctx.server), "the sub-agent's answer never came back")


async def error_400(ctx: Context) -> None:
    async with ctx.session() as s:
        await s.send("Say hello.")
        turn = await s.turn(ctx.timeout * 2)
    expect(turn.end is not None, "the session ended instead of the turn")
    assert turn.end is not None
    refused = [e for e in turn.of(ErrorEvent) if "refuses" in e.message]
    expect(
        turn.end.stop_reason is StopReason.ERROR or bool(refused),
        f"the refusal was not surfaced (turn ended {turn.end.stop_reason.value}, no error event)",
    )
