"""Scripted agent scenarios: what the fake model answers, and what the client does meanwhile.

Each :class:`AgentScenario` pairs a fake-model scenario (a mapping for
:class:`~corral.testing.fake_model.FakeModelServer`) with a ``drive`` coroutine that plays the user's
side on a :class:`~corral.testing.conformance.LiveSession` (the kit's one live driver). The recorder runs them against a real CLI to
record parser fixtures; the real-CLI tests run the same scenarios and check the outcome. Nothing
here knows an adapter id: agents differ only through their capabilities.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..adapters.base import Attachment
from ..events import ApprovalDecision, QuestionAsked, TextDelta, TurnCompleted
from .conformance._session import LiveSession

DriveFn = Callable[[LiveSession], Awaitable[None]]


@dataclass(frozen=True)
class AgentScenario:
    name: str
    description: str
    model: dict[str, Any]
    drive: DriveFn
    permission_mode: str | None = "default"
    approve: ApprovalDecision | None = None
    requires: tuple[str, ...] = ()
    """Capabilities (``cap_*`` names without the prefix) the agent needs for this scenario."""
    answer: Callable[[QuestionAsked], dict[str, str]] | None = None


def red_png() -> bytes:
    """A valid 1×1 red PNG, built here so no binary file has to live in the repo."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def _slow(
    text: str = "This reply is streamed slowly so that the turn can be interrupted. ",
) -> dict[str, Any]:
    return {"text": text, "chunks": 40, "chunk_delay": 0.25}


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


def _shell_steps(command: str) -> list[dict[str, Any]]:
    return [
        {
            "name": "run",
            "match": {"last_is_tool_result": False},
            "reply": {"tool_calls": [{"capability": "shell", "command": command}]},
        },
        {"name": "done", "match": {"last_is_tool_result": True}, "reply": {"text": "DONE"}},
    ]


async def _one_turn(d: LiveSession, text: str) -> None:
    await d.prompt(text)
    await d.turn()


async def drive_text(d: LiveSession) -> None:
    await _one_turn(d, "Say hello.")


async def drive_tool_write(d: LiveSession) -> None:
    await _one_turn(d, "Create hello.txt containing hi.")


async def drive_approval(d: LiveSession) -> None:
    await _one_turn(d, "Run the command.")


async def drive_question(d: LiveSession) -> None:
    await _one_turn(d, "Ask me which color to use.")


async def drive_cancel(d: LiveSession) -> None:
    await d.prompt("Tell me something slow.")
    await d.until(lambda e: isinstance(e, TextDelta), what="first text delta")
    await d.adapter.interrupt()
    await d.turn(timeout=10)
    await _one_turn(d, "Now answer quickly.")


async def drive_follow_up(d: LiveSession) -> None:
    await _one_turn(d, "This is the first question.")
    await _one_turn(d, "This is the second question.")


async def drive_input_during_turn(d: LiveSession) -> None:
    await d.prompt("Tell me something slow.")
    await d.until(lambda e: isinstance(e, TextDelta), what="first text delta")
    await d.prompt("One extra thing.")
    await d.turn()
    # The CLI may fold the extra message into the running turn or answer it in a turn of its own.
    if not any("Extra answer" in (t.result_text or "") for t in d.of_type(TurnCompleted)):
        await d.turn()


async def drive_image(d: LiveSession) -> None:
    image = Attachment(data=red_png(), media_type="image/png", name="red.png")
    await d.prompt("What is in this image?", [image])
    await d.turn()


def last_option(event: QuestionAsked) -> dict[str, str]:
    """Answer every question with its last option (``blue`` for the question scenario)."""
    return {q.question: (q.options[-1] if q.options else "yes") for q in event.questions}


SCENARIOS: dict[str, AgentScenario] = {
    s.name: s
    for s in (
        AgentScenario(
            name="text",
            description="A text answer streamed in three deltas.",
            model={"name": "text", "default": {"text": "Hello from the fake model.", "chunks": 3}},
            drive=drive_text,
        ),
        AgentScenario(
            name="tool-write",
            description="The model writes hello.txt with the agent's write tool (edits auto-accepted).",
            model={
                "name": "tool-write",
                "steps": [
                    {
                        "match": {"last_is_tool_result": False},
                        "reply": {
                            "tool_calls": [
                                {"capability": "write_file", "path": "hello.txt", "content": "hi\n"}
                            ]
                        },
                    },
                    {"match": {"last_is_tool_result": True}, "reply": {"text": "DONE"}},
                ],
            },
            drive=drive_tool_write,
            permission_mode="acceptEdits",
            approve=ApprovalDecision.ALLOW,
        ),
        AgentScenario(
            name="approval-allow",
            description="A shell command needs permission; the user allows it.",
            model={"name": "approval-allow", "steps": _shell_steps("echo corral > approved.txt")},
            drive=drive_approval,
            approve=ApprovalDecision.ALLOW,
            requires=("permissions",),
        ),
        AgentScenario(
            name="approval-deny",
            description="A shell command needs permission; the user denies it.",
            model={"name": "approval-deny", "steps": _shell_steps("echo corral > denied.txt")},
            drive=drive_approval,
            approve=ApprovalDecision.DENY,
            requires=("permissions",),
        ),
        AgentScenario(
            name="question",
            description="The model asks the user a question; the answer comes from the API.",
            model={
                "name": "question",
                "steps": [
                    {
                        "match": {"last_is_tool_result": False},
                        "reply": {
                            "tool_calls": [
                                {
                                    "capability": "ask_user",
                                    "question": "Which color?",
                                    "options": ["red", "blue"],
                                }
                            ]
                        },
                    },
                    {"match": {"last_is_tool_result": True}, "reply": {"text": "DONE"}},
                ],
            },
            drive=drive_question,
            answer=last_option,
            requires=("interact",),
        ),
        AgentScenario(
            name="cancel-mid-turn",
            description="A slow answer is interrupted mid-turn; the next prompt still works.",
            model={
                "name": "cancel-mid-turn",
                "steps": [{"match": {"user_text_contains": "slow"}, "reply": _slow()}],
                "default": {"text": "Quick answer."},
            },
            drive=drive_cancel,
            requires=("cancel",),
        ),
        AgentScenario(
            name="follow-up",
            description="Two prompts on one process; the second request carries the first turn.",
            model={
                "name": "follow-up",
                "steps": [
                    {"match": {"user_text_contains": "first"}, "reply": {"text": "First answer."}},
                    {
                        "match": {"user_text_contains": "second"},
                        "reply": {"text": "Second answer."},
                    },
                ],
            },
            drive=drive_follow_up,
        ),
        AgentScenario(
            name="input-during-turn",
            description="A second prompt is sent while the first turn is still streaming.",
            model={
                "name": "input-during-turn",
                "steps": [
                    {"match": {"user_text_contains": "extra"}, "reply": {"text": "Extra answer."}},
                    {
                        "match": {"user_text_contains": "slow"},
                        "reply": _slow("Slow answer. ") | {"chunks": 8},
                    },
                ],
            },
            drive=drive_input_during_turn,
            requires=("input_during_turn",),
        ),
        AgentScenario(
            name="image-input",
            description="A prompt with a PNG attachment.",
            model={"name": "image-input", "default": {"text": "I see a red square."}},
            drive=drive_image,
            requires=("image_input",),
        ),
        AgentScenario(
            name="thinking",
            description="The model thinks before it answers (thinking blocks streamed).",
            model={
                "name": "thinking",
                "default": {
                    "thinking": "Let me think about this.",
                    "text": "Thought it through.",
                    "chunks": 2,
                },
            },
            drive=drive_text,
            requires=("thinking",),
        ),
        AgentScenario(
            name="subagent",
            description="The model delegates to a sub-agent whose traffic nests under the delegating call.",
            model={
                "name": "subagent",
                "steps": [
                    _delegate("Agent", ["anthropic"], "general-purpose"),
                    # Qwen Code has no named sub-agents by default: no type = a fork of the conversation.
                    _delegate("agent", ["openai-chat"], None),
                    {
                        "name": "sub",
                        "match": {"user_text_contains": "Sub-agent"},
                        "reply": {"text": "Hi from the sub-agent."},
                    },
                    {
                        "name": "done",
                        "match": {"last_is_tool_result": True},
                        "reply": {"text": "DONE"},
                    },
                ],
            },
            drive=drive_text,
            requires=("subagents",),
        ),
        AgentScenario(
            name="error-400",
            description="The model endpoint refuses the request (400, not retried); the turn fails.",
            model={
                "name": "error-400",
                "default": {
                    "error": {"kind": "bad_request", "message": "fake-model refuses this request"}
                },
            },
            drive=drive_text,
        ),
        AgentScenario(
            name="usage",
            description="A text answer whose token usage the agent reports.",
            model={
                "name": "usage",
                "default": {
                    "text": "Counted.",
                    "usage": {"input_tokens": 1234, "output_tokens": 56},
                },
            },
            drive=drive_text,
        ),
    )
}
"""Every recordable scenario by name."""
