"""The Hermes TUI gateway parser, on traffic recorded from hermes-agent 0.19.0
(``corral record hermes-gateway all``) and on what a misbehaving gateway could print."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corral.adapters.hermes_gateway import build_gateway_argv, gateway_python
from corral.errors import ConfigError
from corral.events import (
    ApprovalDecision,
    ApprovalRequested,
    ErrorEvent,
    Event,
    FileDiff,
    QuestionAsked,
    ReasoningDelta,
    StopReason,
    TextComplete,
    TextDelta,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallStarted,
    ToolKind,
    TurnCompleted,
    UnknownEvent,
    Usage,
    decode_event,
    encode,
)
from corral.protocols.hermes_gateway import HermesGatewayParser

from ._ocpi_replay import TRANSCRIPTS, of

V = "hermes-gateway/0.19.0"


def entries(name: str) -> list[dict[str, Any]]:
    path = TRANSCRIPTS / V / f"{name}.jsonl"
    assert path.is_file(), f"missing fixture {path} (corral record hermes-gateway all)"
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]


def run(name: str) -> list[Event]:
    parser = HermesGatewayParser()
    events: list[Event] = []
    for entry in entries(name):
        if entry["dir"] == "exit":
            events += parser.finish()
        elif "line" not in entry:
            continue
        elif entry["dir"] == "out":
            events += parser.feed(entry["line"])
        else:
            events += parser.feed_sent(entry["line"])
    return events


def event(etype: str, payload: Any = None, sid: str = "s1") -> dict[str, Any]:
    params: dict[str, Any] = {"type": etype, "session_id": sid}
    if payload is not None:
        params["payload"] = payload
    return {"jsonrpc": "2.0", "method": "event", "params": params}


def prompt(parser: HermesGatewayParser, text: str = "hi") -> None:
    parser.feed_sent({"method": "prompt.submit", "params": {"session_id": "s1", "text": text}})


# ── recorded ──


def test_text_streams_then_ends_the_turn_once() -> None:
    events = run("text")
    text = "".join(d.text for d in of(events, TextDelta))
    assert text == "Hello from the scripted model."
    assert [e.text for e in of(events, TextComplete)] == [text]
    ends = of(events, TurnCompleted)
    assert [e.stop_reason for e in ends] == [StopReason.END_TURN]
    assert events.index(of(events, TextDelta)[0]) < events.index(ends[0])
    assert not of(events, UnknownEvent), of(events, UnknownEvent)


def test_tool_write_is_an_edit_with_its_diff() -> None:
    events = run("tool-write")
    starts = of(events, ToolCallStarted)
    assert [(s.name, s.kind) for s in starts] == [("write_file", ToolKind.EDIT)]
    done = of(events, ToolCallCompleted)
    assert [d.call_id for d in done] == [starts[0].call_id]
    diffs = of(events, FileDiff)
    assert len(diffs) == 1 and diffs[0].path.endswith("hello.txt")
    assert diffs[0].new_text == "hi"
    assert diffs[0].diff is not None and "\x1b" not in diffs[0].diff and "+hi" in diffs[0].diff


def test_approval_request_then_denied_command() -> None:
    events = run("approval-deny")
    (asked,) = of(events, ApprovalRequested)
    assert asked.kind is ToolKind.COMMAND and asked.cmd and "denied.txt" in asked.cmd
    assert asked.call_id == of(events, ToolCallStarted)[0].call_id
    assert {o.decision for o in asked.options} >= {ApprovalDecision.ALLOW, ApprovalDecision.DENY}
    (failed,) = of(events, ToolCallFailed)
    assert failed.denied and failed.call_id == asked.call_id
    assert of(events, TurnCompleted)[-1].stop_reason is StopReason.END_TURN


def test_approval_allowed_command_completes() -> None:
    events = run("approval-allow")
    assert of(events, ApprovalRequested)
    assert not of(events, ToolCallFailed)
    assert [c.kind for c in of(events, ToolCallCompleted)] == [ToolKind.COMMAND]


def test_cancel_ends_the_turn_cancelled_and_the_next_one_answers() -> None:
    events = run("cancel-mid-turn")
    ends = of(events, TurnCompleted)
    assert [e.stop_reason for e in ends] == [StopReason.CANCELLED, StopReason.END_TURN]


def test_question_is_the_clarify_request() -> None:
    (asked,) = of(run("question"), QuestionAsked)
    assert asked.questions[0].options == ("red", "blue")
    assert asked.request_id


def test_usage_comes_from_message_complete() -> None:
    usages = of(run("usage"), Usage)
    assert usages and all((u.input_tokens or 0) > 0 for u in usages)


def test_session_ids_come_from_the_create_answer() -> None:
    parser = HermesGatewayParser()
    for entry in entries("text"):
        if entry["dir"] == "out" and "line" in entry:
            parser.feed(entry["line"])
    assert parser.session_id and parser.stored_session_id
    assert parser.session_id != parser.stored_session_id


# ── synthetic ──


def test_error_event_ends_an_open_turn() -> None:
    parser = HermesGatewayParser()
    prompt(parser)
    events = parser.feed(event("error", {"message": "agent init failed: boom"}))
    assert [type(e) for e in events] == [ErrorEvent, TurnCompleted]
    assert events[1].stop_reason is StopReason.ERROR  # type: ignore[attr-defined]
    assert parser.idle and not parser.streaming


def test_idle_only_after_the_session_info_that_follows_the_turn() -> None:
    parser = HermesGatewayParser()
    prompt(parser)
    assert not parser.idle
    parser.feed(event("message.complete", {"text": "x", "status": "complete"}))
    assert not parser.streaming and not parser.idle
    parser.feed(event("session.info", {"model": "m"}))
    assert parser.idle and parser.info == {"model": "m"}


def test_interrupted_status_is_cancelled_and_error_status_is_an_error() -> None:
    parser = HermesGatewayParser()
    prompt(parser)
    parser.feed_sent({"method": "session.interrupt", "params": {"session_id": "s1"}})
    (end,) = parser.feed(event("message.complete", {"text": "", "status": "interrupted"}))
    assert isinstance(end, TurnCompleted) and end.stop_reason is StopReason.CANCELLED
    prompt(parser)
    events = parser.feed(event("message.complete", {"text": "Error: 400", "status": "error"}))
    assert not of(events, TextComplete)
    assert of(events, TurnCompleted)[0].error == "Error: 400"


def test_the_gateway_exiting_mid_turn_fails_the_turn() -> None:
    parser = HermesGatewayParser()
    prompt(parser)
    (end,) = parser.finish()
    assert isinstance(end, TurnCompleted) and end.stop_reason is StopReason.ERROR
    assert parser.finish() == []


def test_a_refused_prompt_closes_its_turn() -> None:
    parser = HermesGatewayParser()
    prompt(parser)
    events = parser.submit_failed("session busy")
    assert [type(e) for e in events] == [ErrorEvent, TurnCompleted]
    assert parser.idle and parser.submit_failed("again") == []


def test_approval_choices_become_options_and_unknown_ones_are_dropped() -> None:
    parser = HermesGatewayParser()
    prompt(parser)
    parser.feed(event("tool.start", {"tool_id": "t1", "name": "terminal", "context": "rm"}))
    (asked,) = parser.feed(
        event("approval.request", {"command": "rm -r x", "choices": ["once", "bogus", "deny"]})
    )
    assert isinstance(asked, ApprovalRequested)
    assert [o.id for o in asked.options] == ["once", "deny"]
    assert parser.approval is not None and parser.approval.choices == ("once", "deny")
    parser.feed_sent({"method": "approval.respond", "params": {"choice": "once"}})
    assert parser.approval is None


def test_noise_events_make_nothing_and_unknown_ones_stay_visible() -> None:
    parser = HermesGatewayParser()
    assert parser.feed(event("thinking.delta", {"text": "(o_o) pondering..."})) == []
    assert parser.feed(event("reasoning.available", {"text": "x"})) == []
    (unknown,) = parser.feed(event("brand.new", {"x": 1}))
    assert isinstance(unknown, UnknownEvent) and unknown.vendor_type == "brand.new"


def test_gateway_python_reads_the_shebang(tmp_path: Path) -> None:
    py = tmp_path / "venv" / "bin" / "python3.11"
    py.parent.mkdir(parents=True)
    py.write_text("")
    script = tmp_path / "venv" / "bin" / "hermes"
    script.write_text(f"#!{py}\nimport sys\n")
    assert build_gateway_argv(str(script)) == [str(py), "-m", "tui_gateway.entry"]
    bare = tmp_path / "other" / "hermes"
    bare.parent.mkdir()
    bare.write_text("#!/bin/sh\n")
    with pytest.raises(ConfigError):
        gateway_python(str(bare))
    (bare.parent / "python3").write_text("")
    assert gateway_python(str(bare)) == str(bare.parent / "python3")


# ── nothing escapes the parser ──

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
_types = st.sampled_from(
    [
        "message.start",
        "message.delta",
        "message.complete",
        "reasoning.delta",
        "error",
        "tool.start",
        "tool.complete",
        "approval.request",
        "clarify.request",
        "status.update",
        "session.info",
        "gateway.ready",
    ]
)
_messages = st.one_of(
    _json,
    st.builds(
        lambda t, p, sid: {
            "jsonrpc": "2.0",
            "method": "event",
            "params": {"type": t, "session_id": sid, "payload": p},
        },
        _types,
        _json
        | st.dictionaries(
            st.sampled_from(
                [
                    "text",
                    "status",
                    "usage",
                    "tool_id",
                    "name",
                    "args",
                    "result",
                    "choices",
                    "command",
                    "request_id",
                    "inline_diff",
                ]
            ),
            _json,
        ),
        _json,
    ),
    st.builds(lambda r, i: {"jsonrpc": "2.0", "id": i, "result": r}, _json, _json),
)


@settings(
    max_examples=300,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(st.tuples(st.booleans(), _messages), max_size=12))
def test_no_message_raises_and_every_event_is_storable(batch: list[tuple[bool, Any]]) -> None:
    parser = HermesGatewayParser()
    events: list[Event] = []
    for sent, message in batch:
        events += parser.feed_sent(message) if sent else parser.feed(message)
    events += parser.finish()
    for e in events:
        assert type(decode_event(encode(e))) is type(e)


def test_a_refused_request_fails_the_turn_with_the_reason() -> None:
    events = run("error-400")
    (end,) = of(events, TurnCompleted)
    assert end.stop_reason is StopReason.ERROR
    assert end.error and "400" in end.error
    assert not of(events, TextComplete)


def test_a_rate_limit_is_retried_to_an_answer() -> None:
    events = run("error-429")
    assert of(events, TurnCompleted)[-1].stop_reason is StopReason.END_TURN
    assert "Hello from the scripted model." in "".join(d.text for d in of(events, TextDelta))


def test_a_shell_command_is_a_command_call_with_its_output() -> None:
    events = run("tool-shell")
    (start,) = of(events, ToolCallStarted)
    (done,) = of(events, ToolCallCompleted)
    assert start.kind is ToolKind.COMMAND and done.call_id == start.call_id
    assert isinstance(done.result.structured, dict) and done.result.structured["exit_code"] == 0


def test_reasoning_streams_as_reasoning_not_text() -> None:
    events = run("thinking")
    reasoning = "".join(r.text for r in of(events, ReasoningDelta))
    assert reasoning.strip()
    assert reasoning not in "".join(d.text for d in of(events, TextDelta))
    assert of(events, TurnCompleted)[-1].stop_reason is StopReason.END_TURN


def test_an_image_goes_up_before_the_prompt() -> None:
    methods = [
        e["line"].get("method") for e in entries("image-input") if e["dir"] == "in" and "line" in e
    ]
    assert methods.index("image.attach_bytes") < methods.index("prompt.submit")
