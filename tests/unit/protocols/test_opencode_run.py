"""The ``opencode run --format json`` parser on output recorded from opencode 1.18.33
(``corral record opencode-run all``), and on lines no recording holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from corral.events import (
    ErrorEvent,
    Event,
    FileDiff,
    ReasoningDelta,
    StatusChanged,
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
)
from corral.protocols.opencode_run import OpenCodeRunParser
from corral.testing.fuzz import unstorable

ROOT = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"
V = "opencode-run/1.18.33"
FIXTURES_USED = [
    f"{V}/{name}.jsonl"
    for name in (
        "text",
        "tool-write",
        "tool-shell",
        "follow-up",
        "resume-after-exit",
        "image-input",
        "usage",
        "error-429",
        "error-400",
        "thinking",
        "subagent",
    )
]


def processes(scenario: str) -> list[tuple[list[dict[str, Any]], int]]:
    """The recorded processes of a scenario: (stdout objects, exit code) each."""
    out: list[tuple[list[dict[str, Any]], int]] = []
    lines: list[dict[str, Any]] = []
    for text in (ROOT / V / f"{scenario}.jsonl").read_text("utf-8").splitlines():
        entry = json.loads(text)
        if entry["dir"] == "out":
            lines.append(entry["line"])
        elif entry["dir"] == "exit":
            out.append((lines, entry["code"]))
            lines = []
    return out


def parse(scenario: str, process: int = 0) -> tuple[OpenCodeRunParser, list[Event]]:
    lines, code = processes(scenario)[process]
    parser = OpenCodeRunParser()
    events = [e for line in lines for e in parser.feed(line)]
    return parser, events + parser.finish(code, "")


def of(events: list[Event], kind: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def test_text_is_one_delta_then_the_turn_ends_on_the_stop_step() -> None:
    parser, events = parse("text")
    assert parser.session_id and parser.session_id.startswith("ses_")
    assert isinstance(events[0], StatusChanged) and events[0].status == "running"
    [delta] = of(events, TextDelta)
    assert delta.text == "Hello from the scripted model."
    assert of(events, TextComplete)[0].text == delta.text
    [turn] = of(events, TurnCompleted)
    assert turn.stop_reason is StopReason.END_TURN
    assert turn.result_text == delta.text
    assert events.index(delta) < events.index(turn)
    assert not of(events, UnknownEvent)


def test_the_turn_ends_at_the_stop_step_not_at_exit() -> None:
    lines, _ = processes("text")[0]
    parser = OpenCodeRunParser()
    events = [e for line in lines for e in parser.feed(line)]
    assert isinstance(events[-1], TurnCompleted)
    assert parser.turn_done
    assert parser.finish(0, "") == []


def test_write_tool_is_an_edit_with_a_diff() -> None:
    _, events = parse("tool-write")
    [start] = of(events, ToolCallStarted)
    assert start.kind is ToolKind.EDIT and start.name == "write"
    assert start.file and start.file.endswith("hello.txt")
    [done] = of(events, ToolCallCompleted)
    assert done.call_id == start.call_id
    [diff] = of(events, FileDiff)
    assert diff.path.endswith("hello.txt") and diff.new_text == "hi"
    # a tool step (reason tool-calls) does not end the turn; the answer after it does
    [turn] = of(events, TurnCompleted)
    assert turn.stop_reason is StopReason.END_TURN and turn.result_text == "DONE"
    assert len(of(events, Usage)) == 2


def test_shell_tool_is_a_command_with_its_exit_code() -> None:
    _, events = parse("tool-shell")
    [start] = of(events, ToolCallStarted)
    assert start.kind is ToolKind.COMMAND and start.cmd == "printf hi > shell.txt"
    [done] = of(events, ToolCallCompleted)
    assert done.result.exit_code == 0


def test_usage_carries_the_step_tokens() -> None:
    _, events = parse("usage")
    [usage] = of(events, Usage)
    assert usage.input_tokens == 1234 and usage.output_tokens == 56
    assert usage.cost_usd == 0.0


def test_refused_request_is_an_error_and_fails_the_turn_at_exit() -> None:
    lines, code = processes("error-400")[0]
    assert code == 1
    parser = OpenCodeRunParser()
    events = [e for line in lines for e in parser.feed(line)]
    [error] = of(events, ErrorEvent)
    assert "fake-model refuses this request" in error.message
    assert error.code == "APIError"
    assert not of(events, TurnCompleted)
    [turn] = parser.finish(code, "")
    assert isinstance(turn, TurnCompleted)
    assert turn.stop_reason is StopReason.ERROR
    assert "fake-model refuses this request" in (turn.error or "")


def test_rate_limit_is_retried_inside_opencode() -> None:
    _, events = parse("error-429")
    assert of(events, TurnCompleted)[0].stop_reason is StopReason.END_TURN
    assert "Hello from the scripted model." in of(events, TextDelta)[0].text


def test_reasoning_parts_become_reasoning_deltas() -> None:
    _, events = parse("thinking")
    [reasoning] = of(events, ReasoningDelta)
    assert "think" in reasoning.text
    assert events.index(reasoning) < events.index(of(events, TextDelta)[0])


def test_task_call_is_a_subagent_call() -> None:
    _, events = parse("subagent")
    [start] = of(events, ToolCallStarted)
    assert start.kind is ToolKind.SUBAGENT and start.name == "task"
    assert of(events, ToolCallCompleted)


def test_follow_up_and_resume_continue_one_session() -> None:
    for scenario in ("follow-up", "resume-after-exit"):
        first, _ = parse(scenario, 0)
        second, events = parse(scenario, 1)
        assert first.session_id == second.session_id
        assert of(events, TurnCompleted)[0].stop_reason is StopReason.END_TURN


# ── what no recording holds ──


def test_permission_refusal_is_a_denied_call_and_exit_0_ends_the_turn() -> None:
    """What 1.18.33 printed (tool ``error`` "The user rejected permission…", a ``tool-calls``
    step, exit 0) when a rule asked: run rejects the request itself."""
    parser = OpenCodeRunParser()
    tool = {
        "type": "tool_use",
        "sessionID": "ses_1",
        "part": {
            "type": "tool",
            "tool": "bash",
            "callID": "c1",
            "state": {
                "status": "error",
                "input": {"command": "printf no > denied.txt"},
                "error": "The user rejected permission to use this specific tool call.",
            },
        },
    }
    step = {"type": "step_finish", "sessionID": "ses_1", "part": {"reason": "tool-calls"}}
    events = parser.feed(tool) + parser.feed(step)
    [failed] = of(events, ToolCallFailed)
    assert failed.denied and failed.kind is ToolKind.COMMAND
    assert not of(events, TurnCompleted)
    [turn] = parser.finish(0, "")
    assert isinstance(turn, TurnCompleted) and turn.stop_reason is StopReason.END_TURN


def test_done_line_of_newer_builds_ends_the_turn_once() -> None:
    parser = OpenCodeRunParser()
    [turn] = parser.feed({"type": "done", "sessionID": "ses_1", "reason": "idle"})
    assert isinstance(turn, TurnCompleted) and turn.stop_reason is StopReason.END_TURN
    assert parser.feed({"type": "done"}) == []
    assert parser.finish(0, "") == []


def test_a_process_that_dies_mid_turn_fails_the_turn_with_its_stderr() -> None:
    lines, _ = processes("text")[0]
    parser = OpenCodeRunParser()
    parser.feed(lines[0])
    [turn] = parser.finish(137, "Killed\n")
    assert isinstance(turn, TurnCompleted) and turn.stop_reason is StopReason.ERROR
    assert turn.error == "opencode run exited with code 137: Killed"


def test_length_step_ends_the_turn_at_max_tokens() -> None:
    parser = OpenCodeRunParser()
    [turn] = parser.feed({"type": "step_finish", "part": {"reason": "length"}})
    assert isinstance(turn, TurnCompleted) and turn.stop_reason is StopReason.MAX_TOKENS


def test_wrong_types_are_unknown_never_raised() -> None:
    parser = OpenCodeRunParser()
    for line in (
        {"type": "text", "part": {"text": 5}},
        {"type": "text", "part": "x"},
        {"type": "reasoning", "part": None},
        {"type": "tool_use", "part": []},
        {"type": "tool_use", "part": {"state": "x", "tool": [1]}},
        {"type": "step_finish", "part": {"tokens": {"input": "1", "cache": 3}, "cost": "x"}},
        {"type": "error", "error": "plain"},
        {"type": "error", "error": {"data": [1]}},
        {"type": [1], "sessionID": {"a": 1}},
        {"type": "brand-new-event"},
    ):
        for event in parser.feed(line):
            assert unstorable(event) is None
    assert parser.session_id is None  # a sessionID that is no string is not taken
    assert of(parser.feed({"type": "brand-new-event"}), UnknownEvent)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
KEYS = st.sampled_from(["type", "part", "sessionID", "error", "text", "state", "tokens", "reason"])
TYPES = st.sampled_from(
    ["text", "reasoning", "tool_use", "step_start", "step_finish", "error", "done"]
)


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(
    kind=TYPES,
    part=st.dictionaries(KEYS, JSON, max_size=5),
    extra=st.dictionaries(KEYS, JSON, max_size=3),
    code=st.one_of(st.none(), st.integers(-20, 300)),
)
def test_any_object_of_a_known_type_is_total(
    kind: str, part: dict[str, Any], extra: dict[str, Any], code: int | None
) -> None:
    parser = OpenCodeRunParser()
    events = parser.feed({**extra, "type": kind, "part": part})
    events += parser.feed({**extra, "type": kind, "part": {**part, "state": extra}})
    events += parser.finish(code, "")
    assert all(unstorable(e) is None for e in events)
    assert sum(isinstance(e, TurnCompleted) for e in events) == 1
