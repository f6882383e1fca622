"""Every line-speaking driver over its recorded transcripts, through ``ReplayTransport``.

The real driver runs — approval routing, control replies, interrupts, restarts and the
classification of how the session ended — on lines its real CLI printed, and every line the
driver writes is checked against what it wrote when the recording was made.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from corral.adapters._codex_exec import CodexExecAdapter
from corral.adapters.base import BaseAdapter, iter_events
from corral.adapters.claude import ClaudeAdapter
from corral.adapters.codex import CodexAdapter
from corral.adapters.gemini import GeminiAdapter
from corral.adapters.hermes import HermesAdapter
from corral.adapters.opencode_acp import OpenCodeAcpAdapter
from corral.adapters.pi import PiAdapter
from corral.adapters.qwen import QwenAdapter
from corral.adapters.qwen_acp import QwenAcpAdapter
from corral.events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    EndReason,
    Event,
    QuestionAnswered,
    QuestionAsked,
    SessionEnded,
    StopReason,
    TurnCompleted,
    Usage,
)
from corral.testing import Recording, ReplayDivergence

from ._harness import (
    ROOT,
    Action,
    acp_action,
    claude_action,
    codex_action,
    pi_action,
    replay_session,
)

Driver = tuple[Callable[[str], BaseAdapter], Callable[[Any], Action]]

DRIVERS: dict[str, Driver] = {
    "claude/2.1.197": (lambda cwd: ClaudeAdapter(cwd=cwd, binary="claude"), claude_action),
    "qwen/0.15.10": (lambda cwd: QwenAdapter(cwd=cwd, binary="qwen"), claude_action),
    "gemini/0.61.0": (lambda cwd: GeminiAdapter(cwd=cwd, binary="gemini"), acp_action),
    "qwen-acp/0.15.10": (lambda cwd: QwenAcpAdapter(cwd=cwd, binary="qwen"), acp_action),
    "opencode-acp/1.18.33": (
        lambda cwd: OpenCodeAcpAdapter(cwd=cwd, binary="opencode"),
        acp_action,
    ),
    "hermes/0.19.0": (lambda cwd: HermesAdapter(cwd=cwd, binary="hermes"), acp_action),
    "codex/0.171.0": (lambda cwd: CodexAdapter(cwd=cwd, binary="codex"), codex_action),
    "pi/0.73.1": (lambda cwd: PiAdapter(cwd=cwd, binary="pi"), pi_action),
}


LAST: dict[str, BaseAdapter] = {}


class _Actions(dict[str, Callable[[Any], Action]]):
    def __missing__(self, fixture: str) -> Callable[[Any], Action]:
        return DRIVERS[fixture.rpartition("/")[0]][1]


ACTIONS = _Actions()


async def run(fixture: str, tmp_path: Path, **options: Any) -> tuple[list[Event], Recording]:
    cli, _, scenario = fixture.rpartition("/")
    make, action = DRIVERS[cli]
    recording = Recording.load(ROOT / cli / f"{scenario}.jsonl", **options)
    LAST["adapter"] = adapter = make(str(tmp_path))
    events = await replay_session(adapter, recording, action)
    return events, recording


def of(events: list[Event], kind: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def ended(events: list[Event]) -> SessionEnded:
    end = events[-1]
    assert isinstance(end, SessionEnded)
    return end


def stopped(recording: Recording) -> EndReason:
    """How a session we stopped ends: ``completed``, or ``killed`` when the recorded agent outlived
    its closed stdin and had to be killed (qwen after it ran a command keeps running)."""
    killed = recording.transports[-1].exit_code in (-15, -9, 143, 137)
    return EndReason.KILLED if killed else EndReason.COMPLETED


# ── approvals: the request reaches the user, the answer reaches the agent ──

APPROVALS = [
    ("claude/2.1.197/approval-allow", ApprovalDecision.ALLOW),
    ("claude/2.1.197/approval-deny", ApprovalDecision.DENY),
    ("qwen/0.15.10/approval-allow", ApprovalDecision.ALLOW),
    ("qwen/0.15.10/approval-deny", ApprovalDecision.DENY),
    ("gemini/0.61.0/approval-allow", ApprovalDecision.ALLOW),
    ("gemini/0.61.0/approval-deny", ApprovalDecision.DENY),
    ("qwen-acp/0.15.10/approval-allow", ApprovalDecision.ALLOW),
    ("qwen-acp/0.15.10/approval-deny", ApprovalDecision.DENY),
    ("opencode-acp/1.18.33/approval-allow", ApprovalDecision.ALLOW),
    ("opencode-acp/1.18.33/approval-deny", ApprovalDecision.DENY),
    ("hermes/0.19.0/approval-allow", ApprovalDecision.ALLOW),  # hermes asks before an edit
    ("hermes/0.19.0/approval-deny", ApprovalDecision.DENY),
    ("codex/0.171.0/approval-allow", ApprovalDecision.ALLOW),
    ("codex/0.171.0/approval-deny", ApprovalDecision.DENY),
    ("codex/0.171.0/file-change-allow", ApprovalDecision.ALLOW),
    ("codex/0.171.0/file-change-deny", ApprovalDecision.DENY),
]


@pytest.mark.parametrize(("fixture", "decision"), APPROVALS)
async def test_approvals(fixture: str, decision: ApprovalDecision, tmp_path: Path) -> None:
    events, recording = await run(fixture, tmp_path)
    recording.check()
    requests = of(events, ApprovalRequested)
    resolved = of(events, ApprovalResolved)
    assert requests, "the approval request never reached the user"
    assert [r.request_id for r in resolved] == [r.request_id for r in requests]
    assert {r.decision for r in resolved} == {decision}
    assert of(events, TurnCompleted)
    assert ended(events).reason is stopped(recording)


# ── cancel: the interrupt goes out, the turn ends cancelled, the next turn runs ──

CANCELS = [
    "claude/2.1.197/cancel-mid-turn",
    "qwen/0.15.10/cancel-mid-turn",
    "gemini/0.61.0/cancel-mid-turn",
    "qwen-acp/0.15.10/cancel-mid-turn",
    "hermes/0.19.0/cancel-mid-turn",
    "opencode-acp/1.18.33/cancel-mid-turn",
    "codex/0.171.0/cancel-mid-turn",
    "pi/0.73.1/cancel-mid-turn",
]


@pytest.mark.parametrize("fixture", CANCELS)
async def test_cancel(fixture: str, tmp_path: Path) -> None:
    events, recording = await run(fixture, tmp_path)
    recording.check()
    turns = of(events, TurnCompleted)
    assert turns[0].stop_reason is StopReason.CANCELLED, turns
    if len(turns) > 1:  # the turn after the cancel ran normally
        assert turns[-1].stop_reason is StopReason.END_TURN
    assert ended(events).reason is EndReason.COMPLETED


# ── input during a turn: the second prompt reaches the agent while the first turn runs ──

DURING = [
    "claude/2.1.197/input-during-turn",
    "qwen/0.15.10/input-during-turn",
    "codex/0.171.0/input-during-turn",
    "pi/0.73.1/input-during-turn",
]


@pytest.mark.parametrize("fixture", DURING)
async def test_input_during_a_turn(fixture: str, tmp_path: Path) -> None:
    events, recording = await run(fixture, tmp_path)
    recording.check()  # incl. how it went out: codex turn/steer, pi steer/follow_up, a user line
    prompts = [
        line for line in recording.sent() if (ACTIONS[fixture](line) or ("",))[0] == "prompt"
    ]
    assert len(prompts) == 2
    assert of(events, TurnCompleted)[-1].stop_reason is StopReason.END_TURN
    assert ended(events).reason is EndReason.COMPLETED


# ── control replies: a question answered, an approval withdrawn by an interrupt ──


async def test_claude_question_is_answered_through_the_control_channel(tmp_path: Path) -> None:
    events, recording = await run("claude/2.1.197/question", tmp_path)
    recording.check()
    [asked] = of(events, QuestionAsked)
    [answered] = of(events, QuestionAnswered)
    assert answered.request_id == asked.request_id
    assert answered.answers == {"Which colour do you prefer?": "blue"}
    assert of(events, TurnCompleted)[-1].stop_reason is StopReason.END_TURN


async def test_codex_interrupt_withdraws_the_pending_approval(tmp_path: Path) -> None:
    events, recording = await run("codex/0.171.0/interrupt-during-approval", tmp_path)
    recording.check()  # the driver itself answered the pending approval with "cancel"
    [request] = of(events, ApprovalRequested)
    resolved = [r for r in of(events, ApprovalResolved) if r.request_id == request.request_id]
    assert [r.decision for r in resolved] == [ApprovalDecision.CANCEL]
    turns = of(events, TurnCompleted)
    assert turns[0].stop_reason is StopReason.CANCELLED
    assert turns[-1].stop_reason is StopReason.END_TURN


# ── end of session: stopped by us, or the agent died mid-turn ──

TEXTS = [
    "claude/2.1.197/text",
    "qwen/0.15.10/text",
    "gemini/0.61.0/text",
    "qwen-acp/0.15.10/text",
    "opencode-acp/1.18.33/text",
    "hermes/0.19.0/text",
    "codex/0.171.0/text",
    "pi/0.73.1/text",
]


@pytest.mark.parametrize("fixture", TEXTS)
async def test_a_stopped_session_ends_completed(fixture: str, tmp_path: Path) -> None:
    events, recording = await run(fixture, tmp_path)
    recording.check()
    assert of(events, TurnCompleted)[-1].stop_reason is StopReason.END_TURN
    assert ended(events).reason is EndReason.COMPLETED
    # get_usage() is the sum of the Usage events the driver emitted, for every driver alike
    usage = of(events, Usage)
    totals = await LAST["adapter"].get_usage()
    assert totals.turns == len(usage)
    assert totals.input_tokens == sum(u.input_tokens or 0 for u in usage)
    assert totals.output_tokens == sum(u.output_tokens or 0 for u in usage)
    if LAST["adapter"].provides_usage:
        assert totals.output_tokens > 0


def _cut_mid_turn(path: Path, action: Callable[[Any], Action]) -> list[dict[str, Any]]:
    """The recording up to two agent lines after the first prompt, then the agent exits 1."""
    entries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    out: list[dict[str, Any]] = []
    prompted, after = False, 0
    for entry in entries:
        if entry["dir"] == "exit":
            break
        out.append(entry)
        if entry["dir"] == "in" and (action(entry.get("line")) or ("",))[0] == "prompt":
            prompted = True
        elif prompted and entry["dir"] == "out":
            after += 1
            if after == 2:
                break
    return [*out, {"dir": "exit", "code": 1}]


@pytest.mark.parametrize("fixture", TEXTS)
async def test_an_agent_dying_mid_turn_ends_failed(fixture: str, tmp_path: Path) -> None:
    cli, _, scenario = fixture.rpartition("/")
    make, action = DRIVERS[cli]
    entries = _cut_mid_turn(ROOT / cli / f"{scenario}.jsonl", action)
    recording = Recording(entries, agent_exits=True)
    events = await replay_session(make(str(tmp_path)), recording, action, stop=False)
    assert recording.problems == []
    end = ended(events)
    assert end.reason is EndReason.FAILED, end
    assert end.exit_code == 1


# ── the replay itself: a driver that does something else is caught ──


async def test_a_different_answer_is_a_divergence(tmp_path: Path) -> None:
    make, _ = DRIVERS["claude/2.1.197"]

    def deny_instead(line: Any) -> Action:
        found = claude_action(line)
        return ("answer", "deny") if found and found[0] == "answer" else found

    recording = Recording.load(ROOT / "claude/2.1.197/approval-allow.jsonl", wait=1.0)
    with pytest.raises(ReplayDivergence, match="'deny'"):
        await replay_session(make(str(tmp_path)), recording, deny_instead)
    with pytest.raises(ReplayDivergence):
        recording.check()


async def test_a_prompt_the_recording_lacks_is_a_divergence(tmp_path: Path) -> None:
    make, _ = DRIVERS["pi/0.73.1"]
    recording = Recording.load(ROOT / "pi/0.73.1/text.jsonl", wait=1.0)
    adapter = make(str(tmp_path))
    adapter.transport_factory = recording.factory  # type: ignore[attr-defined]
    await adapter.start("s")
    with contextlib.suppress(Exception):
        await adapter.send("a prompt nobody recorded")
        await adapter.send("and another")
    await adapter.stop()
    assert recording.problems
    assert "a prompt nobody recorded" not in str(recording.sent())


# ── codex exec: one process per turn, the prompt in argv ──


async def _exec_turn(recording: Recording, tmp_path: Path) -> list[Event]:
    """One ``codex exec`` turn through the real driver, then stop: every event up to SessionEnded."""
    adapter = CodexExecAdapter(cwd=str(tmp_path), binary="codex")
    adapter.transport_factory = recording.factory
    await adapter.start("s")
    await adapter.send("Say hello.")
    events: list[Event] = []

    async def collect(until: type[Any]) -> None:
        async for event in iter_events(adapter):
            events.append(event)
            if isinstance(event, until):
                return

    await asyncio.wait_for(collect(TurnCompleted), 15)
    await adapter.stop()
    await asyncio.wait_for(collect(SessionEnded), 5)
    return events


@pytest.mark.parametrize("scenario", ["exec-text", "exec-error-429"])
async def test_codex_exec(scenario: str, tmp_path: Path) -> None:
    recording = Recording.load(ROOT / "codex/0.171.0" / f"{scenario}.jsonl")
    events = await _exec_turn(recording, tmp_path)
    recording.check()
    assert recording.transports[0].argv[-1] == "Say hello." or "Say hello." in " ".join(
        recording.transports[0].argv
    )
    # the 429 is retried by codex and the turn still completes; the retry is reported on the way
    assert of(events, TurnCompleted)[-1].stop_reason is StopReason.END_TURN
    assert ("429 Too Many Requests" in repr(events)) is (scenario == "exec-error-429")
    # end of session: the turn's process exited 0 on its own, stop() ends the session completed
    assert ended(events).reason is EndReason.COMPLETED


async def test_codex_exec_process_dying_mid_turn_fails_the_turn(tmp_path: Path) -> None:
    """exec runs one process per turn: one that dies mid-turn fails that turn, not the session."""
    entries = [
        json.loads(line)
        for line in (ROOT / "codex/0.171.0/exec-text.jsonl").read_text().splitlines()
        if line.strip()
    ]
    head = [e for e in entries if e["dir"] == "out"][:3]  # up to turn.started, no message yet
    recording = Recording([*head, {"dir": "exit", "code": 1}], agent_exits=True)
    events = await _exec_turn(recording, tmp_path)
    assert recording.problems == []
    [turn] = of(events, TurnCompleted)
    assert turn.stop_reason is StopReason.ERROR
    assert "exited with code 1 before the turn completed" in (turn.error or "")
    assert ended(events).reason is EndReason.COMPLETED
