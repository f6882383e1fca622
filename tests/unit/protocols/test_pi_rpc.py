"""The Pi RPC parser on traffic recorded from pi 0.73.1 (``python -m corral.testing._record_ocpi pi all``)."""

from __future__ import annotations

import json

from corral.adapters.base import Attachment
from corral.adapters.pi import build_pi_argv, image_payload
from corral.events import (
    ErrorEvent,
    FileDiff,
    ReasoningComplete,
    ReasoningDelta,
    StatusChanged,
    StopReason,
    TextComplete,
    TextDelta,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallStarted,
    ToolCallUpdated,
    ToolKind,
    TurnCompleted,
    UnknownEvent,
    Usage,
    WarningEvent,
)
from corral.protocols.pi_rpc import PiRpcParser

from ._ocpi_replay import TRANSCRIPTS, entries, of, replay

V = "pi/0.73.1"
FIXTURES_USED = [
    f"{V}/{name}.jsonl"
    for name in (
        "text",
        "tool-write",
        "shell-output",
        "thinking",
        "cancel-mid-turn",
        "input-during-turn",
        "image-input",
        "error-400",
        "error-429",
        "retry-compact",
        "tool-error",
    )
]


def run(name: str) -> list:
    return replay(f"{V}/{name}.jsonl", PiRpcParser())


def test_text_streams_deltas_then_one_turn_end() -> None:
    events = run("text")
    deltas = of(events, TextDelta)
    assert len(deltas) >= 2
    assert "".join(d.text for d in deltas) == "Hello from the scripted model."
    assert [e.text for e in of(events, TextComplete)] == ["Hello from the scripted model."]
    ends = of(events, TurnCompleted)
    assert len(ends) == 1 and ends[0].stop_reason is StopReason.END_TURN
    assert ends[0].result_text == "Hello from the scripted model."
    assert isinstance(events[-1], TurnCompleted)
    assert isinstance(events[0], StatusChanged) and events[0].status == "busy"
    assert not of(events, UnknownEvent)


def test_usage_from_each_assistant_message() -> None:
    usages = of(run("text"), Usage)
    assert usages and usages[0].input_tokens == 10 and usages[0].output_tokens == 5
    assert usages[0].model == "fake-model" and usages[0].cost_usd == 0.0


def test_write_tool_lifecycle_and_diff() -> None:
    events = run("tool-write")
    (start,) = of(events, ToolCallStarted)
    assert start.name == "write" and start.kind is ToolKind.EDIT
    assert start.file is not None and start.file.endswith("hello.txt")
    (done,) = of(events, ToolCallCompleted)
    assert done.call_id == start.call_id and "Successfully wrote" in done.result.output
    (diff,) = of(events, FileDiff)
    assert diff.path.endswith("hello.txt") and diff.new_text == "hi"
    assert events.index(start) < events.index(done) < events.index(of(events, TurnCompleted)[0])
    # two model round trips (tool call, then text), one corral turn
    assert len(of(events, Usage)) == 2 and len(of(events, TurnCompleted)) == 1


def test_shell_output_streams_as_an_update() -> None:
    events = run("shell-output")
    (start,) = of(events, ToolCallStarted)
    assert start.kind is ToolKind.COMMAND and start.cmd == "printf 'one\\ntwo\\n'"
    updates = of(events, ToolCallUpdated)
    assert "".join(u.output_delta or "" for u in updates) == "one\ntwo\n"
    assert of(events, ToolCallCompleted)[0].result.output == "one\ntwo\n"


def test_thinking_deltas_and_complete() -> None:
    events = run("thinking")
    assert "".join(e.text for e in of(events, ReasoningDelta)) == "Let me think about it."
    assert [e.text for e in of(events, ReasoningComplete)] == ["Let me think about it."]
    first_reasoning = events.index(of(events, ReasoningDelta)[0])
    assert first_reasoning < events.index(of(events, TextDelta)[0])


def test_abort_ends_the_turn_cancelled() -> None:
    events = run("cancel-mid-turn")
    sent = [e["line"]["type"] for e in entries(f"{V}/cancel-mid-turn.jsonl") if e["dir"] == "in"]
    assert "abort" in sent
    ends = of(events, TurnCompleted)
    assert len(ends) == 1 and ends[0].stop_reason is StopReason.CANCELLED


def test_steer_is_answered_inside_the_same_turn() -> None:
    lines = entries(f"{V}/input-during-turn.jsonl")
    steer = [e["line"] for e in lines if e["dir"] == "in" and e["line"].get("streamingBehavior")]
    assert steer and steer[0]["streamingBehavior"] == "steer"
    events = run("input-during-turn")
    completes = of(events, TextComplete)
    assert len(completes) == 2 and completes[1].text == "Hello from the scripted model."
    assert completes[0].message_id != completes[1].message_id
    assert len(of(events, TurnCompleted)) == 1


def test_image_prompt_was_sent_with_an_image() -> None:
    prompts = [
        e["line"]
        for e in entries(f"{V}/image-input.jsonl")
        if e["dir"] == "in" and e["line"]["type"] == "prompt"
    ]
    assert prompts[0]["images"][0]["mimeType"] == "image/png"
    assert of(run("image-input"), TurnCompleted)[0].stop_reason is StopReason.END_TURN


def test_provider_error_ends_the_turn_with_its_message() -> None:
    (end,) = of(run("error-400"), TurnCompleted)
    assert end.stop_reason is StopReason.ERROR
    assert end.error is not None and "scripted failure" in end.error


def test_rate_limit_is_retried_by_the_provider_sdk_without_an_event() -> None:
    # pi 0.73.1's OpenAI client retries a 429 itself: two model requests, no auto_retry events.
    meta = json.loads((TRANSCRIPTS / V / "error-429.meta.json").read_text("utf-8"))
    assert meta["model_requests"] == 2
    events = run("error-429")
    assert not of(events, WarningEvent) and not of(events, ErrorEvent)
    (end,) = of(events, TurnCompleted)
    assert end.stop_reason is StopReason.END_TURN


def test_get_state_is_remembered() -> None:
    parser = PiRpcParser()
    replay(f"{V}/text.jsonl", parser)
    assert str(parser.state["sessionFile"]).endswith(".jsonl")
    assert parser.state["model"]["id"] == "fake-model"


def test_failed_command_and_unknown_lines() -> None:
    parser = PiRpcParser()
    parser.feed_sent({"type": "prompt", "message": "x"})
    (err,) = parser.feed(
        {"type": "response", "command": "prompt", "success": False, "error": "no model"}
    )
    assert isinstance(err, ErrorEvent) and err.code == "prompt" and err.message == "no model"
    assert not parser.streaming
    (unknown,) = parser.feed({"type": "brand_new_event", "x": 1})
    assert isinstance(unknown, UnknownEvent) and unknown.vendor_type == "brand_new_event"
    assert isinstance(parser.feed([1, 2])[0], UnknownEvent)


def test_failed_run_then_scheduled_retry_then_compaction() -> None:
    # pi ends the failed run first, then schedules its own retry (after agent_end); the manual
    # compaction we sent cancels that retry.
    events = run("retry-compact")
    (end,) = of(events, TurnCompleted)
    assert end.stop_reason is StopReason.ERROR and "scripted outage" in (end.error or "")
    statuses = [(s.status, s.message) for s in of(events, StatusChanged)]
    assert ("retry", "retry 1/3: 500 scripted outage") in statuses
    assert ("compacting", "manual") in statuses and ("compacted", None) in statuses
    (warning,) = of(events, WarningEvent)
    assert warning.code == "retry" and warning.message == "Retry cancelled"
    assert events.index(end) < events.index(warning)


def test_tool_error_is_a_failed_call() -> None:
    events = run("tool-error")
    (start,) = of(events, ToolCallStarted)
    assert start.kind is ToolKind.READ
    (failed,) = of(events, ToolCallFailed)
    assert failed.call_id == start.call_id and not failed.denied
    assert "ENOENT" in failed.error and failed.result is not None and failed.result.is_error
    assert of(events, TurnCompleted)[0].stop_reason is StopReason.END_TURN


def test_exit_during_a_turn_ends_it_with_an_error() -> None:
    parser = PiRpcParser()
    parser.feed_sent({"type": "prompt", "message": "x"})
    (end,) = parser.finish()
    assert isinstance(end, TurnCompleted) and end.stop_reason is StopReason.ERROR
    assert parser.finish() == []


def test_build_pi_argv() -> None:
    assert build_pi_argv(binary="pi") == ["pi", "--mode", "rpc"]
    assert build_pi_argv(binary="pi", model="m", effort="high", resume="/s.jsonl") == [
        "pi",
        "--mode",
        "rpc",
        "--model",
        "m",
        "--thinking",
        "high",
        "--session",
        "/s.jsonl",
    ]
    redirected = ["--provider", "corral", "--model", "fake-model", "--offline"]
    assert build_pi_argv(binary="pi", model="fake-model", extra_args=redirected) == [
        "pi",
        "--mode",
        "rpc",
        *redirected,
    ]


def test_image_payload_keeps_images_only() -> None:
    payload = image_payload(
        [
            Attachment(data=b"\x89PNG", media_type="image/png"),
            Attachment(data=b"text", media_type="text/plain"),
        ]
    )
    assert payload == [{"type": "image", "data": "iVBORw==", "mimeType": "image/png"}]


def test_every_opencode_and_pi_fixture_is_used_and_has_its_sidecar() -> None:
    from . import test_opencode_sse

    used = set(FIXTURES_USED) | set(test_opencode_sse.FIXTURES_USED)
    root = TRANSCRIPTS
    recorded = {
        str(p.relative_to(root))
        for cli in ("opencode", "pi")
        for p in (root / cli).rglob("*.jsonl")
        if "store" not in p.relative_to(root).parts  # session-store fixtures (docs/handoff.md)
    }
    assert recorded == used
    for rel in recorded:
        meta = (root / rel).with_suffix(".meta.json")
        assert meta.is_file(), f"{rel} has no .meta.json"
