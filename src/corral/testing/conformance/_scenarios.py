"""The named conformance scenarios.

Each scenario pairs a script for the scripted model server with a coroutine that drives an adapter
through the adapter contract and checks what happened — in the normalized events *and* in the
server's request log, which is the ground truth of what the provider received.

``capability`` names the ``Capabilities`` flag a scenario exercises. An adapter that does not
declare it gets ``unsupported``; one that declares it and fails gets ``fail``. A scenario with
``suite=False`` (:mod:`._protocol_scenarios`) runs only when named; every name is one of the
catalogue's (:mod:`corral.testing._catalogue`).
"""

from __future__ import annotations

import base64
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ...adapters.base import Attachment
from ...events import (
    ApprovalDecision,
    ApprovalRequested,
    ErrorEvent,
    Event,
    FileDiff,
    QuestionAsked,
    StatusChanged,
    StopReason,
    TextDelta,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallStarted,
    ToolKind,
    TurnCompleted,
    Usage,
    WarningEvent,
)
from . import _log
from . import _protocol_scenarios as protocol
from ._context import Context
from ._session import LiveSession, expect, turn_ok

HELLO = "Hello from the scripted model."
# A 1×1 transparent PNG.
PNG_1PX = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)

Runner = Callable[[Context], Awaitable[None]]


@dataclass(frozen=True)
class ConformanceScenario:
    name: str
    description: str
    run: Runner
    script: dict[str, Any] = field(default_factory=dict)
    capability: str | None = None
    suite: bool = True
    """In the default run of ``corral conformance``; otherwise run (and recorded) by name."""


def _tool_step(capability: str, times: int = 1, **args: Any) -> dict[str, Any]:
    return {
        "name": f"call-{capability}",
        "match": {"last_is_tool_result": False},
        "times": times,
        "reply": {"tool_calls": [{"capability": capability, **args}]},
    }


def _script(*steps: dict[str, Any], default: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"steps": list(steps), "default": default or {"text": HELLO, "chunks": 4}}


async def _auto_allow(session: LiveSession, event: Event) -> None:
    """Scenarios that are not about approvals allow whatever the agent asks."""
    if isinstance(event, ApprovalRequested):
        await session.adapter.respond_approval(event.request_id, ApprovalDecision.ALLOW)


async def _until_streaming(s: LiveSession, timeout: float, too_early: str) -> None:
    """Wait until the turn is visibly under way (a text delta arrived)."""
    while True:
        _, event = await s.next_event(timeout)
        if isinstance(event, TextDelta):
            return
        expect(not isinstance(event, TurnCompleted), too_early)


# ── scenarios ──────────────────────────────────────────────────────────────────────────────────


async def text(ctx: Context) -> None:
    async with ctx.session() as s:
        await s.send("Say hello.")
        turn = await s.turn(ctx.timeout)
    turn_ok(turn.end, "text")
    deltas = turn.of(TextDelta)
    expect(deltas, "no text.delta event: text was not streamed")
    t_delta, t_end = turn.time_of(TextDelta), turn.time_of(TurnCompleted)
    expect(
        t_delta is not None and t_end is not None and t_delta < t_end,
        "text deltas did not arrive before the turn ended",
    )
    expect(HELLO in turn.text, f"final text {turn.text!r} lacks {HELLO!r}")


async def tool_write(ctx: Context) -> None:
    async with ctx.session() as s:
        await s.send("Create hello.txt containing hi.")
        turn = await s.turn(ctx.timeout, on_event=lambda e: _auto_allow(s, e))
    turn_ok(turn.end, "tool-write")
    target = ctx.workspace.repo / "hello.txt"
    expect(target.is_file(), "hello.txt was not written")
    expect(target.read_text() == "hi", f"hello.txt holds {target.read_text()!r}, not 'hi'")
    starts = [e for e in turn.of(ToolCallStarted) if e.kind is ToolKind.EDIT]
    expect(starts, "no tool.started event of kind edit")
    done = {e.call_id for e in turn.of(ToolCallCompleted)}
    expect(starts[0].call_id in done, "the edit call never reached tool.completed")
    expect(
        any(d.path.endswith("hello.txt") for d in turn.of(FileDiff)),
        "no file.diff event for hello.txt",
    )
    expect(_log.saw_tool_result(ctx.server), "the model never received the tool result")


async def tool_shell(ctx: Context) -> None:
    async with ctx.session() as s:
        await s.send("Run a shell command that writes shell.txt.")
        turn = await s.turn(ctx.timeout, on_event=lambda e: _auto_allow(s, e))
    turn_ok(turn.end, "tool-shell")
    expect((ctx.workspace.repo / "shell.txt").is_file(), "the command did not run")
    starts = [e for e in turn.of(ToolCallStarted) if e.kind in (ToolKind.COMMAND, ToolKind.TEST)]
    expect(starts, "no tool.started event of kind command")
    done = {e.call_id for e in turn.of(ToolCallCompleted)}
    expect(starts[0].call_id in done, "the command call never reached tool.completed")
    expect(_log.saw_tool_result(ctx.server), "the model never received the command's output")


async def _approval(ctx: Context, decision: ApprovalDecision, filename: str) -> None:
    asked: list[ApprovalRequested] = []

    async def answer(s: LiveSession, event: Event) -> None:
        if isinstance(event, ApprovalRequested):
            asked.append(event)
            await s.adapter.respond_approval(event.request_id, decision)

    async with ctx.session(**ctx.target.extra.get("approval_init", {})) as s:
        await s.send(f"Run the command that writes {filename}.")
        turn = await s.turn(ctx.timeout, on_event=lambda e: answer(s, e))
    expect(asked, "the agent never asked for approval")
    expect(turn.end is not None, "the session ended instead of the turn")
    written = (ctx.workspace.repo / filename).exists()
    if decision is ApprovalDecision.ALLOW:
        turn_ok(turn.end, "approval-allow")
        expect(written, f"approved command did not run ({filename} missing)")
        expect(turn.of(ToolCallCompleted), "approved call never reached tool.completed")
    else:
        expect(not written, f"denied command ran anyway ({filename} exists)")
        failed = turn.of(ToolCallFailed)
        expect(any(f.denied for f in failed), "the tool call was not reported as denied")


async def approval_allow(ctx: Context) -> None:
    await _approval(ctx, ApprovalDecision.ALLOW, "approved.txt")


async def approval_deny(ctx: Context) -> None:
    await _approval(ctx, ApprovalDecision.DENY, "denied.txt")


async def question(ctx: Context) -> None:
    asked: list[QuestionAsked] = []

    async def answer(s: LiveSession, event: Event) -> None:
        if isinstance(event, QuestionAsked):
            asked.append(event)
            await s.adapter.answer_question(
                event.request_id, {q.question: "blue" for q in event.questions}
            )
        else:
            await _auto_allow(s, event)

    async with ctx.session() as s:
        await s.send("Ask me which colour I prefer.")
        turn = await s.turn(ctx.timeout, on_event=lambda e: answer(s, e))
    turn_ok(turn.end, "question")
    expect(asked, "no question.asked event")
    expect(_log.saw_tool_result(ctx.server, "blue"), "the model never received the answer 'blue'")


async def cancel_mid_turn(ctx: Context) -> None:
    async with ctx.session() as s:
        await s.send("Tell me a long story.")
        await _until_streaming(s, ctx.timeout, "the turn ended before it could be cancelled")
        t0 = time.monotonic()
        await s.adapter.interrupt()
        turn = await s.turn(10)
        elapsed = time.monotonic() - t0
        expect(turn.end is not None, "the session ended instead of the turn")
        assert turn.end is not None
        expect(
            turn.end.stop_reason is StopReason.CANCELLED,
            f"turn ended {turn.end.stop_reason.value}, not cancelled",
        )
        expect(elapsed <= 2.0, f"cancel took {elapsed:.2f} s (limit 2 s)")
        ctx.server_release()
        await s.send("Say hello.")
        after = await s.turn(ctx.timeout)
    turn_ok(after.end, "prompt after cancel")
    expect(HELLO in after.text, "the prompt after the cancel got no answer")


async def follow_up(ctx: Context) -> None:
    async with ctx.session() as s:
        await s.send("Remember the word apple.")
        turn_ok((await s.turn(ctx.timeout)).end, "first turn")
        await s.send("Which word did I ask you to remember?")
        second = await s.turn(ctx.timeout)
    turn_ok(second.end, "follow-up turn")
    expect(HELLO in second.text, "the follow-up got no answer")
    expect(
        _log.last_main_carries(ctx.server, "apple"),
        "the follow-up request did not carry the first turn",
    )


async def input_during_turn(ctx: Context) -> None:
    async with ctx.session() as s:
        await s.send("Tell me a long story.")
        await _until_streaming(s, ctx.timeout, "the turn ended before the second prompt")
        await s.send("SECOND PROMPT: also say goodbye.")
        deadline = time.monotonic() + ctx.timeout * 2
        while not _log.any_main_carries(ctx.server, "SECOND PROMPT"):
            expect(time.monotonic() < deadline, "the second prompt never reached the model")
            turn = await s.turn(ctx.timeout)
            expect(turn.end is not None, "the session ended")
    expect(
        _log.any_main_carries(ctx.server, "SECOND PROMPT"),
        "the prompt sent during the turn never reached the model",
    )


async def resume_after_exit(ctx: Context) -> None:
    ids: list[str] = []
    async with ctx.session(on_session_id=ids.append) as s:
        await s.send("Remember the word walnut.")
        turn_ok((await s.turn(ctx.timeout)).end, "first session")
    expect(ids, "the adapter never reported its session id (on_session_id)")
    async with ctx.session(resume_session_id=ids[-1]) as s:
        await s.send("Which word did I ask you to remember?")
        turn = await s.turn(ctx.timeout)
    turn_ok(turn.end, "resumed session")
    expect(
        _log.last_main_carries(ctx.server, "walnut"),
        "the resumed session's request did not carry the earlier turn",
    )


async def image_input(ctx: Context) -> None:
    image = Attachment(data=PNG_1PX, media_type="image/png", name="pixel.png")
    async with ctx.session() as s:
        await s.send("What is in this image?", [image])
        turn = await s.turn(ctx.timeout)
    turn_ok(turn.end, "image-input")
    expect(_log.any_image(ctx.server), "no request to the model held an image block")


async def usage(ctx: Context) -> None:
    async with ctx.session() as s:
        await s.send("Say hello.")
        turn = await s.turn(ctx.timeout)
    turn_ok(turn.end, "usage")
    usages = turn.of(Usage)
    expect(usages, "no usage event in the turn")
    expect(
        any((u.input_tokens or 0) > 0 or (u.output_tokens or 0) > 0 for u in usages),
        "usage events carry no token counts",
    )


async def error_429(ctx: Context) -> None:
    async with ctx.session() as s:
        await s.send("Say hello.")
        turn = await s.turn(ctx.timeout * 2, on_event=lambda e: _auto_allow(s, e))
    expect(turn.end is not None, "the session ended instead of the turn")
    surfaced = (
        bool(turn.of(ErrorEvent)) or bool(turn.of(WarningEvent)) or bool(turn.of(StatusChanged))
    )
    retried = _log.count_main(ctx.server) >= 2 and HELLO in turn.text
    expect(
        surfaced or retried,
        "the 429 was neither surfaced (error/warning/status) nor retried to an answer",
    )


SLOW_TEXT = {"text": "Once upon a time " * 40, "chunks": 40, "chunk_delay": 0.25}

SCENARIOS: dict[str, ConformanceScenario] = {
    s.name: s
    for s in [
        ConformanceScenario("text", "streamed text, deltas before the turn ends", text, _script()),
        ConformanceScenario(
            "tool-write",
            "a file-writing tool call with its result and diff",
            tool_write,
            _script(_tool_step("write_file", path="hello.txt", content="hi")),
        ),
        ConformanceScenario(
            "tool-shell",
            "a shell command tool call",
            tool_shell,
            _script(_tool_step("shell", command="printf hi > shell.txt")),
        ),
        ConformanceScenario(
            "approval-allow",
            "an approval request answered allow",
            approval_allow,
            _script(_tool_step("shell", command="printf ok > approved.txt")),
            "permissions",
        ),
        ConformanceScenario(
            "approval-deny",
            "an approval request answered deny",
            approval_deny,
            _script(_tool_step("shell", command="printf no > denied.txt")),
            "permissions",
        ),
        ConformanceScenario(
            "question",
            "the agent asks the user and gets the answer",
            question,
            _script(
                _tool_step(
                    "ask_user", question="Which colour do you prefer?", options=["red", "blue"]
                )
            ),
            "interact",
        ),
        ConformanceScenario(
            "cancel-mid-turn",
            "interrupt a streaming turn, then prompt again",
            cancel_mid_turn,
            _script({"name": "slow", "match": {"turn": 1}, "times": 1, "reply": SLOW_TEXT}),
            "cancel",
        ),
        ConformanceScenario(
            "follow-up", "a second prompt on the same session", follow_up, _script()
        ),
        ConformanceScenario(
            "input-during-turn",
            "a prompt sent while a turn runs reaches the model",
            input_during_turn,
            _script(
                {
                    "name": "slow",
                    "match": {"turn": 1},
                    "times": 1,
                    "reply": {**SLOW_TEXT, "chunks": 12, "chunk_delay": 0.2},
                }
            ),
            "input_during_turn",
        ),
        ConformanceScenario(
            "resume-after-exit",
            "a new process resumes the earlier conversation",
            resume_after_exit,
            _script(),
            "resume",
        ),
        ConformanceScenario(
            "image-input",
            "an image attachment reaches the model",
            image_input,
            _script(),
            "image_input",
        ),
        ConformanceScenario(
            "usage",
            "token usage is reported",
            usage,
            _script(default={"text": HELLO, "usage": {"input_tokens": 1234, "output_tokens": 56}}),
        ),
        ConformanceScenario(
            "error-429",
            "a rate-limited request is surfaced or retried",
            error_429,
            _script(
                {
                    "name": "429",
                    "match": {"turn": 1},
                    "times": 1,
                    "reply": {"error": {"kind": "rate_limit", "retry_after": 1}},
                }
            ),
        ),
        ConformanceScenario(
            "error-400",
            "a refused request (400, not retried) fails the turn visibly",
            protocol.error_400,
            protocol.ERROR_400_SCRIPT,
            suite=False,
        ),
        ConformanceScenario(
            "thinking",
            "the model's reasoning reaches the client",
            protocol.thinking,
            protocol.THINKING_SCRIPT,
            "thinking",
            suite=False,
        ),
        ConformanceScenario(
            "subagent",
            "a delegated sub-agent asks the model and its answer comes back",
            protocol.subagent,
            protocol.SUBAGENT_SCRIPT,
            "subagents",
            suite=False,
        ),
    ]
}


def scenario_names() -> list[str]:
    """The default suite (what ``corral conformance`` runs without ``-s``)."""
    return [name for name, s in SCENARIOS.items() if s.suite]
