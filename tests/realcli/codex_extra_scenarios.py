"""Codex file-change scenarios, beyond the shared conformance suite.

With the redirect's custom provider and an unknown model name, codex 0.171 advertises no
``apply_patch`` tool, so the suite's file writes go through the shell. A *model catalog*
(``-c model_catalog_json=PATH``) that declares ``fake-model`` with ``apply_patch_tool_type =
"freeform"`` makes codex offer ``apply_patch``; then file writes are ``fileChange`` items, and
with ``approvalPolicy: "untrusted"`` codex asks ``item/fileChange/requestApproval``.

Also ``subagent``: the model calls ``spawn_agent``; codex runs the child thread on the same
connection. And ``command-output``: a slow command whose output codex streams as
``item/commandExecution/outputDelta``.

Used by tests/realcli/test_codex_extra.py and scripts/record_codex.py.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from corral.adapters.base import BaseAdapter
from corral.events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    Event,
    FileDiff,
    QuestionAsked,
    ReasoningComplete,
    StatusChanged,
    StopReason,
    TextComplete,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallStarted,
    ToolCallUpdated,
    ToolKind,
    TurnCompleted,
)
from corral.testing.conformance import _log
from corral.testing.conformance._context import Context
from corral.testing.conformance._scenarios import ConformanceScenario, _script, _tool_step
from corral.testing.conformance._session import LiveSession, expect
from corral.testing.conformance._types import Target

UNTRUSTED = ["-c", 'approval_policy="untrusted"']


def fake_model_entry(slug: str = "fake-model") -> dict[str, Any]:
    """The fewest ModelInfo fields codex 0.171 accepts (found by its parse errors, one by one)."""
    return {
        "slug": slug,
        "display_name": slug,
        "base_instructions": "You are a coding agent working in the user's repository.",
        "apply_patch_tool_type": "freeform",
        "shell_type": "shell_command",
        "visibility": "list",
        "supported_in_api": True,
        "priority": 1,
        "supported_reasoning_levels": [],
        "support_verbosity": False,
        "truncation_policy": {"mode": "tokens", "limit": 10000},
        "experimental_supported_tools": [],
    }


def write_catalog(path: Path) -> Path:
    path.write_text(json.dumps({"models": [fake_model_entry()]}))
    return path


def with_catalog(target: Target, catalog: Path) -> Target:
    """``target`` whose adapters also get ``-c model_catalog_json=CATALOG``."""
    make = target.make_adapter

    def make_adapter(**kwargs: Any) -> BaseAdapter:
        extra = [
            *kwargs.pop("extra_args", []),
            "-c",
            f"model_catalog_json={json.dumps(str(catalog))}",
        ]
        return make(extra_args=extra, **kwargs)

    return Target(
        agent=f"{target.agent}+apply_patch",
        adapter_class=target.adapter_class,
        make_adapter=make_adapter,
        unsupported={},
        turn_timeout=target.turn_timeout,
        extra=target.extra,
    )


async def _file_change(ctx: Context, decision: ApprovalDecision, filename: str) -> None:
    asked: list[ApprovalRequested] = []

    async def answer(s: LiveSession, event: Event) -> None:
        if isinstance(event, ApprovalRequested):
            asked.append(event)
            await s.adapter.respond_approval(event.request_id, decision)

    async with ctx.session(extra_args=UNTRUSTED) as s:
        await s.send(f"Create {filename} containing hi.")
        turn = await s.turn(ctx.timeout, on_event=lambda e: answer(s, e))
    expect(asked, "codex never asked to approve the file change")
    expect(asked[0].kind is ToolKind.EDIT, f"approval kind {asked[0].kind}, not edit")
    expect((asked[0].file or "").endswith(filename), f"approval names {asked[0].file!r}")
    written = (ctx.workspace.repo / filename).exists()
    if decision is ApprovalDecision.ALLOW:
        expect(written, f"approved edit did not write {filename}")
        done = [e for e in turn.of(ToolCallCompleted) if e.kind is ToolKind.EDIT]
        expect(done and done[0].call_id == asked[0].call_id, "the edit never completed")
        diffs = [d for d in turn.of(FileDiff) if d.path.endswith(filename)]
        expect(diffs and "+hi" in (diffs[0].diff or ""), "no diff adding 'hi'")
    else:
        expect(not written, f"denied edit wrote {filename} anyway")
        expect(any(f.denied for f in turn.of(ToolCallFailed)), "the edit was not reported denied")


async def file_change_allow(ctx: Context) -> None:
    await _file_change(ctx, ApprovalDecision.ALLOW, "allowed.txt")


async def file_change_deny(ctx: Context) -> None:
    await _file_change(ctx, ApprovalDecision.DENY, "refused.txt")


STREAMING_COMMAND = "for i in 1 2 3; do echo line$i; sleep 0.4; done"


async def command_output(ctx: Context) -> None:
    """A slow command's output streams as ``ToolCallUpdated`` deltas before it completes."""
    async with ctx.session() as s:
        await s.send("Count to three slowly in the shell.")
        turn = await s.turn(ctx.timeout)
    deltas = [u.output_delta for u in turn.of(ToolCallUpdated) if u.output_delta]
    expect(deltas, "no output delta streamed")
    done = turn.of(ToolCallCompleted)
    expect(done and done[0].result.output == "line1\nline2\nline3\n", "wrong final output")
    t_delta, t_done = turn.time_of(ToolCallUpdated), turn.time_of(ToolCallCompleted)
    expect(t_delta is not None and t_done is not None and t_delta < t_done, "deltas came late")


COMMAND_OUTPUT = ConformanceScenario(
    "shell-output",
    "a slow command's output streams",
    command_output,
    _script(_tool_step("shell", command=STREAMING_COMMAND)),
)


async def subagent(ctx: Context) -> None:
    """The model spawns a sub-agent: its thread's events nest under the spawning call, its turn
    never ends ours, and the session takes the next prompt normally."""
    async with ctx.session() as s:
        await s.send("MAIN TASK: delegate to a helper.")
        turn = await s.turn(ctx.timeout)
        spawned = [e for e in turn.of(ToolCallStarted) if e.kind is ToolKind.SUBAGENT]
        expect(spawned, "no sub-agent tool call")
        call_id = spawned[0].call_id
        # The sub-agent may finish after our turn did: read on until it says so.
        late: list[Event] = []
        while not any(
            isinstance(e, StatusChanged) and e.status.startswith("subagent.completed")
            for e in [*turn.events, *late]
        ):
            late.append((await s.next_event(ctx.timeout))[1])
            expect(not isinstance(late[-1], TurnCompleted), "a sub-agent turn ended ours")
        child_text = [
            e for e in [*turn.events, *late] if isinstance(e, TextComplete) and e.parent_call_id
        ]
        expect(child_text, "no text from the sub-agent")
        expect(child_text[0].parent_call_id == call_id, "sub-agent text not under its call")
        expect(child_text[0].text == "child says hi", f"sub-agent said {child_text[0].text!r}")
        expect(turn.end is not None and turn.end.result_text != "child says hi", "result mixed")
        await s.send("Say hello.")
        after = await s.turn(ctx.timeout)
    expect(after.end is not None and "Hello" in after.text, "the next prompt got no answer")


SUBAGENT = ConformanceScenario(
    "subagent",
    "a spawned sub-agent's events nest under the spawning call",
    subagent,
    {
        "steps": [
            {
                "name": "child",
                "match": {"user_text_contains": "CHILD TASK"},
                "reply": {"text": "child says hi"},
            },
            {
                "name": "spawn",
                "match": {"user_text_contains": "MAIN TASK", "last_is_tool_result": False},
                "times": 1,
                "reply": {
                    "tool_calls": [
                        {"name": "spawn_agent", "arguments": {"message": "CHILD TASK: say hi"}}
                    ]
                },
            },
        ],
        "default": {"text": "Hello from the scripted model.", "chunks": 4},
    },
    "subagents",
)


async def reasoning(ctx: Context) -> None:
    """Model reasoning (a Responses ``reasoning`` item) reaches the client as reasoning events."""
    async with ctx.session() as s:
        await s.send("Think, then say hello.")
        turn = await s.turn(ctx.timeout)
    done = turn.of(ReasoningComplete)
    expect(done, "no reasoning.complete event; saw: " + turn.describe())
    expect("weigh" in done[0].text, f"reasoning text {done[0].text!r}")
    expect(turn.end is not None and turn.end.stop_reason is StopReason.END_TURN, "turn failed")


REASONING = ConformanceScenario(
    "thinking",
    "reasoning summaries are surfaced",
    reasoning,
    _script(
        {
            "name": "think",
            "match": {"turn": 1},
            "reply": {"thinking": "Let me weigh the options.", "text": "Hello.", "chunks": 2},
        }
    ),
    "thinking",
)


async def turn_failed(ctx: Context) -> None:
    """A request the provider rejects (400) fails the turn with codex's error message."""
    async with ctx.session() as s:
        await s.send("Say hello.")
        turn = await s.turn(ctx.timeout)
        expect(turn.end is not None, "the session ended instead of the turn")
        assert turn.end is not None
        expect(turn.end.stop_reason is StopReason.ERROR, f"turn ended {turn.end.stop_reason}")
        expect(turn.end.error, "the failed turn carries no error text")
        await s.send("Say hello.")
        after = await s.turn(ctx.timeout)
    expect(after.end is not None and after.end.stop_reason is StopReason.END_TURN, "no recovery")


TURN_FAILED = ConformanceScenario(
    "error-400",
    "a rejected request fails the turn, the session goes on",
    turn_failed,
    _script(
        {
            "name": "400",
            "match": {"turn": 1},
            "times": 1,
            "reply": {"error": {"kind": "bad_request", "message": "scripted rejection"}},
        }
    ),
)

QUESTIONS_FEATURE = ["--enable", "default_mode_request_user_input"]


async def question_enabled(ctx: Context) -> None:
    """With codex's under-development ``default_mode_request_user_input`` feature, the model's
    ``request_user_input`` reaches the client as ``QuestionAsked`` and the answer goes back."""
    asked: list[QuestionAsked] = []

    async def answer(s: LiveSession, event: Event) -> None:
        if isinstance(event, QuestionAsked):
            asked.append(event)
            await s.adapter.answer_question(
                event.request_id, {q.question: "blue" for q in event.questions}
            )

    async with ctx.session(extra_args=QUESTIONS_FEATURE) as s:
        await s.send("Ask me which colour I prefer.")
        turn = await s.turn(ctx.timeout, on_event=lambda e: answer(s, e))
    expect(asked, "no question.asked event")
    expect(asked[0].questions[0].options == ("red", "blue"), f"options {asked[0].questions}")
    expect(turn.end is not None and turn.end.stop_reason is StopReason.END_TURN, "turn failed")
    expect(_log.saw_tool_result(ctx.server, "blue"), "the model never received the answer")


QUESTION = ConformanceScenario(
    "question",
    "request_user_input with the feature enabled",
    question_enabled,
    _script(
        _tool_step("ask_user", question="Which colour do you prefer?", options=["red", "blue"])
    ),
)


async def interrupt_during_approval(ctx: Context) -> None:
    """Interrupting while codex waits for an approval cancels the turn and withdraws the request."""
    async with ctx.session(extra_args=UNTRUSTED) as s:
        await s.send("Run the command that writes pending.txt.")
        while True:
            _, event = await s.next_event(ctx.timeout)
            expect(not isinstance(event, TurnCompleted), "the turn ended without asking")
            if isinstance(event, ApprovalRequested):
                break
        await s.adapter.interrupt()
        turn = await s.turn(10)
        expect(turn.end is not None, "the session ended instead of the turn")
        assert turn.end is not None
        expect(turn.end.stop_reason is StopReason.CANCELLED, f"turn ended {turn.end.stop_reason}")
        withdrawn = [e for e in turn.of(ApprovalResolved) if e.request_id == event.request_id]
        expect(withdrawn, "the pending approval was never resolved")
        expect(withdrawn[0].decision is ApprovalDecision.CANCEL, "not withdrawn as cancel")
        expect(not (ctx.workspace.repo / "pending.txt").exists(), "the command ran anyway")
        ctx.server_release()
        await s.send("Say hello.")
        after = await s.turn(ctx.timeout)
    expect(after.end is not None and after.end.stop_reason is StopReason.END_TURN, "no recovery")


INTERRUPT_APPROVAL = ConformanceScenario(
    "interrupt-during-approval",
    "interrupt while an approval is pending",
    interrupt_during_approval,
    _script(_tool_step("shell", command="printf x > pending.txt")),
    "cancel",
)


async def approval_always(ctx: Context) -> None:
    """``allow_always`` (codex offers ``acceptWithExecpolicyAmendment``) lets the same command run
    again without a second question."""
    asked: list[ApprovalRequested] = []

    async def answer(s: LiveSession, event: Event) -> None:
        if isinstance(event, ApprovalRequested):
            asked.append(event)
            await s.adapter.respond_approval(event.request_id, ApprovalDecision.ALLOW_ALWAYS)

    async with ctx.session(extra_args=UNTRUSTED) as s:
        await s.send("Run the same command twice.")
        turn = await s.turn(ctx.timeout, on_event=lambda e: answer(s, e))
    expect(len(asked) == 1, f"asked {len(asked)} times, not once")
    done = [e for e in turn.of(ToolCallCompleted) if e.kind is ToolKind.COMMAND]
    expect(len(done) == 2, f"{len(done)} command(s) completed, not 2")
    expect((ctx.workspace.repo / "always.txt").read_text() == "aa", "the command did not run twice")


APPROVAL_ALWAYS = ConformanceScenario(
    "approval-always",
    "allow_always: the same command is not asked again",
    approval_always,
    _script(
        {
            "name": "first",
            "match": {"turn": 1},
            "reply": {"tool_calls": [{"capability": "shell", "command": "printf a >> always.txt"}]},
        },
        {
            "name": "again",
            "match": {"turn": 2},
            "reply": {"tool_calls": [{"capability": "shell", "command": "printf a >> always.txt"}]},
        },
    ),
    "permissions",
)


def extra_target(target: Target) -> Target:
    """The codex target for :data:`EXTRA_SCENARIOS`: their ``question`` enables the feature that
    codex's shared target lacks, so it is no longer unsupported there."""
    unsupported = {k: v for k, v in target.unsupported.items() if k != "question"}
    return dataclasses.replace(target, unsupported=unsupported)


EXTRA_SCENARIOS = {
    s.name: s
    for s in [
        SUBAGENT,
        REASONING,
        TURN_FAILED,
        COMMAND_OUTPUT,
        QUESTION,
        INTERRUPT_APPROVAL,
        APPROVAL_ALWAYS,
    ]
}

FILE_CHANGE_SCENARIOS = {
    s.name: s
    for s in [
        ConformanceScenario(
            "file-change-allow",
            "an apply_patch edit approved",
            file_change_allow,
            _script(_tool_step("write_file", path="allowed.txt", content="hi")),
            "permissions",
        ),
        ConformanceScenario(
            "file-change-deny",
            "an apply_patch edit refused",
            file_change_deny,
            _script(_tool_step("write_file", path="refused.txt", content="hi")),
            "permissions",
        ),
    ]
}
