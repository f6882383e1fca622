"""The ``hermes-gateway`` driver over transcripts recorded from hermes-agent 0.19.0's TUI gateway
(``corral record hermes-gateway all``), through ``ReplayTransport``: approvals, cancel, the
clarify question, follow-up, resume and the end of the session run the live code."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from corral.adapters.base import Attachment
from corral.adapters.hermes_gateway import HermesGatewayAdapter
from corral.errors import UnsupportedOperation
from corral.events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    EndReason,
    Event,
    QuestionAnswered,
    QuestionAsked,
    SessionEnded,
    SessionStarted,
    StopReason,
    TextDelta,
    ToolCallFailed,
    TurnCompleted,
    Usage,
)
from corral.testing import Recording

from ._harness import ROOT, Action, replay_session

FIXTURES_USED = [
    f"hermes-gateway/0.19.0/{name}.jsonl"
    for name in (
        "text",
        "tool-write",
        "tool-shell",
        "approval-allow",
        "approval-deny",
        "question",
        "cancel-mid-turn",
        "follow-up",
        "resume-after-exit",
        "image-input",
        "usage",
        "error-429",
        "error-400",
        "thinking",
    )
]
CLI = ROOT / "hermes-gateway" / "0.19.0"
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def gateway_action(line: Any) -> Action:
    msg = _d(line)
    params = _d(msg.get("params"))
    if msg.get("method") == "prompt.submit":
        return ("prompt", str(params.get("text", "")))
    if msg.get("method") == "session.interrupt":
        return ("interrupt", None)
    if msg.get("method") == "approval.respond":
        return ("answer", params.get("choice"))
    if msg.get("method") == "clarify.respond":
        return ("question", {"Which colour do you prefer?": str(params.get("answer", ""))})
    return None


def make(tmp_path: Path, **options: Any) -> HermesGatewayAdapter:
    """An adapter whose ``hermes`` is a script naming a (never run) interpreter."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    (bindir / "python3").write_text("")
    script = bindir / "hermes"
    script.write_text(f"#!{bindir / 'python3'}\n")
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return HermesGatewayAdapter(cwd=str(work), binary=str(script), **options)


async def run(
    scenario: str, tmp_path: Path, **options: Any
) -> tuple[list[Event], Recording, HermesGatewayAdapter]:
    recording = Recording.load(CLI / f"{scenario}.jsonl")
    adapter = make(tmp_path, **options)
    events = await replay_session(adapter, recording, gateway_action)
    recording.check()
    return events, recording, adapter


def of(events: list[Event], kind: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def sent(recording: Recording, method: str) -> list[dict[str, Any]]:
    return [
        _d(m.get("params"))
        for t in recording.transports
        for m in t.written
        if _d(m).get("method") == method
    ]


async def test_text_starts_streams_and_stops_completed(tmp_path: Path) -> None:
    events, recording, adapter = await run("text", tmp_path)
    (started,) = of(events, SessionStarted)
    assert started.agent.agent_id == "hermes-gateway" and started.agent.agent_session_id
    assert "".join(d.text for d in of(events, TextDelta)) == "Hello from the scripted model."
    assert [t.stop_reason for t in of(events, TurnCompleted)] == [StopReason.END_TURN]
    assert isinstance(events[-1], SessionEnded) and events[-1].reason is EndReason.COMPLETED
    assert sent(recording, "session.create")[0]["cwd"] == adapter.cwd
    totals = await adapter.get_usage()
    assert totals.output_tokens == sum(u.output_tokens or 0 for u in of(events, Usage)) > 0


@pytest.mark.parametrize(
    ("scenario", "decision", "choice"),
    [
        ("approval-allow", ApprovalDecision.ALLOW, "once"),
        ("approval-deny", ApprovalDecision.DENY, "deny"),
    ],
)
async def test_approvals_reach_the_user_and_the_answer_reaches_hermes(
    scenario: str, decision: ApprovalDecision, choice: str, tmp_path: Path
) -> None:
    events, recording, _ = await run(scenario, tmp_path)
    requests = of(events, ApprovalRequested)
    resolved = of(events, ApprovalResolved)
    assert requests and [r.request_id for r in resolved] == [r.request_id for r in requests]
    assert {r.decision for r in resolved} == {decision}
    assert [p["choice"] for p in sent(recording, "approval.respond")] == [choice]
    denied = [f for f in of(events, ToolCallFailed) if f.denied]
    assert bool(denied) is (decision is ApprovalDecision.DENY)
    assert of(events, TurnCompleted)[-1].stop_reason is StopReason.END_TURN


async def test_an_unknown_approval_id_is_refused(tmp_path: Path) -> None:
    adapter = make(tmp_path)
    with pytest.raises(Exception, match="no pending Hermes approval"):
        await adapter.respond_approval("approval-9", ApprovalDecision.ALLOW)


async def test_cancel_interrupts_then_the_next_prompt_runs(tmp_path: Path) -> None:
    events, recording, _ = await run("cancel-mid-turn", tmp_path)
    assert len(sent(recording, "session.interrupt")) == 1
    turns = of(events, TurnCompleted)
    assert [t.stop_reason for t in turns] == [StopReason.CANCELLED, StopReason.END_TURN]


async def test_the_clarify_question_is_answered(tmp_path: Path) -> None:
    events, recording, _ = await run("question", tmp_path)
    (asked,) = of(events, QuestionAsked)
    (answered,) = of(events, QuestionAnswered)
    assert answered.request_id == asked.request_id
    (reply,) = sent(recording, "clarify.respond")
    assert reply == {"request_id": asked.request_id, "answer": "blue"}


async def test_follow_up_is_a_second_prompt_on_the_same_session(tmp_path: Path) -> None:
    events, recording, _ = await run("follow-up", tmp_path)
    prompts = sent(recording, "prompt.submit")
    assert len(prompts) == 2 and prompts[0]["session_id"] == prompts[1]["session_id"]
    assert [t.stop_reason for t in of(events, TurnCompleted)] == [StopReason.END_TURN] * 2
    # On the real CLI the driver waited for the gateway to let go of the first turn: the second
    # prompt started a turn ("streaming"), it was not queued behind (or interrupting) the first.
    entries = [json.loads(x) for x in (CLI / "follow-up.jsonl").read_text().splitlines() if x]
    statuses = [
        _d(e["line"].get("result")).get("status")
        for e in entries
        if e["dir"] == "out" and "status" in _d(_d(e.get("line")).get("result"))
    ]
    assert statuses == ["streaming", "streaming"]


async def test_resume_opens_the_stored_session_in_a_new_process(tmp_path: Path) -> None:
    segments = Recording.load(CLI / "resume-after-exit.jsonl").segments
    assert len(segments) == 2  # the recording holds two processes
    ids: list[str] = []
    first = Recording(segments[0])
    await replay_session(make(tmp_path, on_session_id=ids.append), first, gateway_action)
    first.check()
    assert ids and not sent(first, "session.resume")
    second = Recording(segments[1])
    events = await replay_session(make(tmp_path, resume_session_id=ids[-1]), second, gateway_action)
    second.check()
    assert sent(second, "session.resume") == [{"session_id": ids[-1]}]
    assert of(events, TurnCompleted)[-1].stop_reason is StopReason.END_TURN


async def test_a_gateway_dying_mid_turn_ends_the_session_failed(tmp_path: Path) -> None:
    lines = [json.loads(x) for x in (CLI / "text.jsonl").read_text().splitlines() if x.strip()]
    cut: list[dict[str, Any]] = []
    for entry in lines:
        cut.append(entry)
        if entry["dir"] == "out" and _d(_d(entry.get("line")).get("params")).get("type") == (
            "message.start"
        ):
            break
    recording = Recording([*cut, {"dir": "exit", "code": 1}], agent_exits=True)
    events = await replay_session(make(tmp_path), recording, gateway_action, stop=False)
    assert recording.problems == []
    turns = of(events, TurnCompleted)
    assert turns and turns[-1].stop_reason is StopReason.ERROR
    end = events[-1]
    assert isinstance(end, SessionEnded) and end.reason is EndReason.FAILED and end.exit_code == 1


async def test_arguments_and_documents_are_refused_not_dropped(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedOperation, match="command-line arguments"):
        make(tmp_path, extra_args=["--yolo"])
    doc = Attachment(data=b"%PDF", media_type="application/pdf", name="a.pdf")
    with pytest.raises(UnsupportedOperation, match=r"a\.pdf"):
        await make(tmp_path).send("read this", [doc])


@pytest.mark.parametrize(
    "scenario",
    sorted(
        p.stem for p in CLI.glob("*.jsonl") if p.stem not in ("resume-after-exit", "image-input")
    ),
)
async def test_every_recording_replays_without_divergence(scenario: str, tmp_path: Path) -> None:
    meta = json.loads((CLI / f"{scenario}.meta.json").read_text())
    assert meta["scenario"] == scenario and meta["outcome"] == "pass"
    events, _, _ = await run(scenario, tmp_path)
    assert of(events, TurnCompleted), scenario
    assert isinstance(events[-1], SessionEnded) and events[-1].reason is EndReason.COMPLETED


async def test_an_image_is_attached_then_the_prompt_submitted(tmp_path: Path) -> None:
    recording = Recording.load(CLI / "image-input.jsonl")
    adapter = make(tmp_path)
    pixel = Attachment(data=base64.b64decode(PIXEL), media_type="image/png", name="pixel.png")
    plain_send = adapter.send

    async def send_with_image(text: str, attachments: Any = None) -> None:
        await plain_send(text, [pixel])

    def action(line: Any) -> Action:
        # The user's doing is the whole send: the attachment first, then the prompt.
        if _d(line).get("method") == "image.attach_bytes":
            return ("prompt", "What is in this image?")
        if _d(line).get("method") == "prompt.submit":
            return None
        return gateway_action(line)

    adapter.send = send_with_image  # type: ignore[method-assign]
    events = await replay_session(adapter, recording, action)
    recording.check()
    (attached,) = sent(recording, "image.attach_bytes")
    assert attached["content_base64"] == PIXEL and attached["filename"] == "pixel.png"
    assert sent(recording, "prompt.submit")[0]["text"] == "What is in this image?"
    assert of(events, TurnCompleted)[-1].stop_reason is StopReason.END_TURN
