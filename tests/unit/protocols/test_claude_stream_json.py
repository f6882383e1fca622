"""ClaudeStreamParser on transcripts recorded from the real Claude Code and Qwen Code CLIs.

Every fixture was recorded by ``corral record <agent> <scenario>`` against the scripted model; the
scenarios are the conformance suite's (``corral.testing.conformance``).
"""

from __future__ import annotations

from typing import Any

import pytest

from corral.events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    ErrorEvent,
    Event,
    FileDiff,
    QuestionAnswered,
    QuestionAsked,
    ReasoningComplete,
    ReasoningDelta,
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
)
from corral.protocols.claude_stream_json import ClaudeStreamParser

from ._replay import entries, replay

HELLO = "Hello from the scripted model."
CLAUDE = "claude/2.1.197"
QWEN = "qwen/0.15.10"
BOTH = [CLAUDE, QWEN]
SCENARIOS_BOTH = [
    "text",
    "tool-write",
    "approval-allow",
    "approval-deny",
    "cancel-mid-turn",
    "follow-up",
    "input-during-turn",
    "image-input",
    "usage",
    "thinking",
    "error-400",
]
SCENARIOS_CLAUDE_ONLY = ["question", "subagent"]

FIXTURES_USED = [f"{cli}/{s}.jsonl" for cli in BOTH for s in SCENARIOS_BOTH] + [
    f"{CLAUDE}/{s}.jsonl" for s in SCENARIOS_CLAUDE_ONLY
]
"""Fixtures this module consumes (checked by test_fixture_usage)."""


def of(events: list[Event], cls: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, cls)]


def index(events: list[Event], event: Event) -> int:
    return next(i for i, e in enumerate(events) if e is event)


def turns(events: list[Event]) -> list[TurnCompleted]:
    return of(events, TurnCompleted)


@pytest.mark.parametrize("rel", FIXTURES_USED)
def test_every_recorded_line_is_understood(rel: str) -> None:
    events = replay(rel)
    assert of(events, UnknownEvent) == []
    assert all(e.raw is not None for e in events if not isinstance(e, TurnCompleted) or e.raw)


@pytest.mark.parametrize("cli", BOTH)
def test_text_streams_deltas_before_the_turn_ends(cli: str) -> None:
    events = replay(f"{cli}/text.jsonl")
    deltas = of(events, TextDelta)
    assert "".join(d.text for d in deltas) == HELLO
    assert len(deltas) >= 2
    (turn,) = turns(events)
    assert turn.stop_reason is StopReason.END_TURN
    assert turn.result_text == HELLO
    assert index(events, deltas[-1]) < index(events, turn)
    assert [c.text for c in of(events, TextComplete)] == [HELLO]
    assert {d.message_id for d in deltas} == {of(events, TextComplete)[0].message_id}


@pytest.mark.parametrize("cli", BOTH)
def test_tool_write_reports_call_result_and_diff(cli: str) -> None:
    events = replay(f"{cli}/tool-write.jsonl")
    (started,) = of(events, ToolCallStarted)
    assert started.kind is ToolKind.EDIT
    update = next(u for u in of(events, ToolCallUpdated) if u.input)
    assert update.file is not None and update.file.endswith("/hello.txt")
    (done,) = of(events, ToolCallCompleted)
    assert done.call_id == started.call_id
    assert done.kind is ToolKind.EDIT
    assert "hello.txt" in done.result.output
    (diff,) = of(events, FileDiff)
    assert diff.call_id == started.call_id
    assert diff.path.endswith("/hello.txt")
    assert diff.new_text == "hi"
    assert diff.diff is not None and "+hi" in diff.diff
    assert index(events, started) < index(events, done) < index(events, diff)
    assert turns(events)[-1].stop_reason is StopReason.END_TURN


@pytest.mark.parametrize("cli", BOTH)
def test_approval_allow(cli: str) -> None:
    events = replay(f"{cli}/approval-allow.jsonl")
    (asked,) = of(events, ApprovalRequested)
    assert asked.kind is ToolKind.COMMAND
    assert asked.cmd == "printf ok > approved.txt"
    assert {o.decision for o in asked.options} >= {ApprovalDecision.ALLOW, ApprovalDecision.DENY}
    (resolved,) = of(events, ApprovalResolved)
    assert resolved.request_id == asked.request_id
    assert resolved.decision is ApprovalDecision.ALLOW
    (done,) = of(events, ToolCallCompleted)
    assert done.call_id == asked.call_id
    assert of(events, ToolCallFailed) == []
    assert index(events, asked) < index(events, resolved) < index(events, done)


@pytest.mark.parametrize("cli", BOTH)
def test_approval_deny_marks_the_call_denied(cli: str) -> None:
    events = replay(f"{cli}/approval-deny.jsonl")
    (asked,) = of(events, ApprovalRequested)
    (resolved,) = of(events, ApprovalResolved)
    assert resolved.decision is ApprovalDecision.DENY
    (failed,) = of(events, ToolCallFailed)
    assert failed.call_id == asked.call_id
    assert failed.denied
    assert of(events, ToolCallCompleted) == []
    assert turns(events)[-1].stop_reason is StopReason.END_TURN


def test_question_is_asked_and_answered() -> None:
    events = replay(f"{CLAUDE}/question.jsonl")
    (asked,) = of(events, QuestionAsked)
    (question,) = asked.questions
    assert question.question == "Which colour do you prefer?"
    assert question.options == ("red", "blue")
    (answered,) = of(events, QuestionAnswered)
    assert answered.request_id == asked.request_id
    assert answered.answers == {"Which colour do you prefer?": "blue"}
    (done,) = of(events, ToolCallCompleted)
    assert done.call_id == asked.call_id
    assert "blue" in done.result.output
    assert of(events, ApprovalRequested) == []


@pytest.mark.parametrize("cli", BOTH)
def test_cancel_ends_the_turn_cancelled_and_the_next_turn_works(cli: str) -> None:
    events = replay(f"{cli}/cancel-mid-turn.jsonl")
    first, second = turns(events)
    assert first.stop_reason is StopReason.CANCELLED
    assert second.stop_reason is StopReason.END_TURN
    assert second.result_text == HELLO


@pytest.mark.parametrize("cli", BOTH)
def test_follow_up_turns(cli: str) -> None:
    events = replay(f"{cli}/follow-up.jsonl")
    assert [t.result_text for t in turns(events)] == [HELLO, HELLO]
    prompts = [_texts(u["message"]["content"]) for u in _sent_user(f"{cli}/follow-up.jsonl")]
    assert prompts == ["Remember the word apple.", "Which word did I ask you to remember?"]
    assert all(t.stop_reason is StopReason.END_TURN for t in turns(events))


@pytest.mark.parametrize("cli", BOTH)
def test_input_during_turn_is_answered(cli: str) -> None:
    events = replay(f"{cli}/input-during-turn.jsonl")
    texts = " ".join(t.result_text or "" for t in turns(events))
    assert "Once upon a time" in texts  # the first, slow answer
    prompts = [
        _texts(u["message"]["content"]) for u in _sent_user(f"{cli}/input-during-turn.jsonl")
    ]
    assert len(prompts) == 2 and prompts[1].startswith("SECOND PROMPT")
    assert turns(events)[-1].stop_reason is StopReason.END_TURN


def test_image_prompt_is_sent_as_a_content_block() -> None:
    blocks = _sent_user(f"{CLAUDE}/image-input.jsonl")[0]["message"]["content"]
    assert [b["type"] for b in blocks] == ["text", "image"]
    assert blocks[1]["source"]["media_type"] == "image/png"
    assert turns(replay(f"{CLAUDE}/image-input.jsonl"))[-1].result_text == HELLO


def test_qwen_image_prompt_references_a_file() -> None:
    # Qwen Code's stream-json input keeps only text blocks; the image goes as an @file reference.
    blocks = _sent_user(f"{QWEN}/image-input.jsonl")[0]["message"]["content"]
    assert [b["type"] for b in blocks] == ["text"]
    assert blocks[0]["text"].startswith("What is in this image?")
    assert blocks[0]["text"].rstrip().endswith("pixel.png")
    assert "\n@/" in blocks[0]["text"]
    assert turns(replay(f"{QWEN}/image-input.jsonl"))[-1].result_text == HELLO


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if b.get("type") == "text")


def _sent_user(rel: str) -> list[dict[str, Any]]:
    return [e["line"] for e in entries(rel) if e["dir"] == "in" and e["line"]["type"] == "user"]


@pytest.mark.parametrize("cli", BOTH)
def test_usage_is_reported_per_turn(cli: str) -> None:
    events = replay(f"{cli}/usage.jsonl")
    (usage,) = of(events, Usage)
    assert usage.model == "fake-model"
    # The scripted model charges 1234 in / 56 out per request; Qwen Code sums every request of
    # the turn (it made two here), Claude Code reports the one.
    assert usage.input_tokens and usage.input_tokens % 1234 == 0
    assert usage.output_tokens and usage.output_tokens % 56 == 0
    if cli == CLAUDE:
        assert (usage.input_tokens, usage.output_tokens) == (1234, 56)
        assert usage.cost_usd is not None and usage.cost_usd > 0
    assert index(events, usage) < index(events, turns(events)[-1])


@pytest.mark.parametrize("cli", BOTH)
def test_api_error_fails_the_turn(cli: str) -> None:
    # Claude says is_error; Qwen Code answers "[API Error: …]" in a "success" result.
    events = replay(f"{cli}/error-400.jsonl")
    (turn,) = turns(events)
    assert turn.stop_reason is StopReason.ERROR
    assert turn.error is not None and "fake-model refuses this request" in turn.error
    assert [e for e in of(events, ErrorEvent) if "refuses" in e.message]


@pytest.mark.parametrize("cli", BOTH)
def test_thinking_streams_reasoning(cli: str) -> None:
    events = replay(f"{cli}/thinking.jsonl")
    assert "".join(d.text for d in of(events, ReasoningDelta)) == "Let me think about this."
    assert [r.text for r in of(events, ReasoningComplete)] == ["Let me think about this."]
    assert turns(events)[-1].result_text == HELLO


def test_subagent_traffic_nests_under_its_call() -> None:
    events = replay(f"{CLAUDE}/subagent.jsonl")
    (started,) = of(events, ToolCallStarted)
    assert started.kind is ToolKind.SUBAGENT
    nested = [e for e in of(events, TextComplete) if e.parent_call_id]
    assert [e.text for e in nested] == ["Hi from the sub-agent."]
    assert nested[0].parent_call_id == started.call_id
    statuses = [
        u.status for u in of(events, ToolCallUpdated) if u.call_id == started.call_id and u.status
    ]
    assert statuses[0] == "running" and statuses[-1] == "completed"
    (done,) = of(events, ToolCallCompleted)
    assert done.call_id == started.call_id
    assert turns(events)[-1].result_text == "DONE"


def test_session_facts_come_from_the_init_line() -> None:
    parser = ClaudeStreamParser()
    replay(f"{CLAUDE}/text.jsonl", parser)
    assert parser.version == "2.1.197"
    assert parser.model == "fake-model"
    assert parser.session_id
    assert "/compact" in parser.slash_commands
    qwen = ClaudeStreamParser()
    replay(f"{QWEN}/text.jsonl", qwen)
    assert qwen.version == "0.15.10"
    assert qwen.permission_mode == "default"


def test_a_turn_cut_short_is_finished_with_an_error() -> None:
    # The first lines of a recorded turn, then the stream stops: finish() closes the turn.
    parser = ClaudeStreamParser()
    for entry in entries(f"{CLAUDE}/text.jsonl"):
        if entry["dir"] == "in":
            parser.feed_sent(entry["line"])
        elif entry["dir"] == "out" and entry["line"]["type"] == "result":
            break
        elif entry["dir"] == "out":
            parser.feed(entry["line"])
    closing = parser.finish()
    assert [type(e).__name__ for e in closing] == ["ErrorEvent", "TurnCompleted"]
    assert closing[-1].stop_reason is StopReason.ERROR  # type: ignore[union-attr]
    assert parser.finish() == []
