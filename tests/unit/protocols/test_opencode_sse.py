"""The OpenCode server parser on traffic recorded from opencode 1.18.33
(``python -m corral.testing._record_ocpi opencode all``): /event data plus our HTTP exchanges."""

from __future__ import annotations

from corral.events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    ErrorEvent,
    FileDiff,
    PlanUpdated,
    QuestionAnswered,
    QuestionAsked,
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
)
from corral.protocols._opencode_state import _IGNORED_PREFIXES, IGNORED_TYPES
from corral.protocols.opencode_sse import _HANDLERS, OpenCodeSseParser

from ._ocpi_replay import entries, of, replay

V = "opencode/1.18.33"
FIXTURES_USED = [
    f"{V}/{name}.jsonl"
    for name in (
        "text",
        "tool-write",
        "shell-output",
        "approval-allow",
        "approval-deny",
        "question",
        "todo",
        "subagent",
        "thinking",
        "cancel-mid-turn",
        "input-during-turn",
        "image-input",
        "error-400",
        "error-429",
        "tool-error",
    )
]


def run(name: str) -> list:
    return replay(f"{V}/{name}.jsonl", OpenCodeSseParser())


def sent(name: str) -> list[dict]:
    return [e["line"] for e in entries(f"{V}/{name}.jsonl") if e["dir"] == "in"]


def test_text_deltas_complete_and_one_turn() -> None:
    events = run("text")
    assert "".join(e.text for e in of(events, TextDelta)) == "Hello from the scripted model."
    assert len(of(events, TextDelta)) >= 2
    assert [e.text for e in of(events, TextComplete)] == ["Hello from the scripted model."]
    (end,) = of(events, TurnCompleted)
    assert end.stop_reason is StopReason.END_TURN
    assert end.result_text == "Hello from the scripted model."
    assert events[-1] is end
    busy = of(events, StatusChanged)
    assert [s.status for s in busy] == ["busy"]
    # the user's own prompt is never echoed as assistant text
    assert all("Say hello." not in e.text for e in of(events, TextDelta))
    assert not of(events, UnknownEvent)


def test_usage_from_step_finish() -> None:
    (usage,) = of(run("text"), Usage)
    assert (usage.input_tokens, usage.output_tokens) == (10, 5)
    assert usage.cost_usd == 0.0 and usage.model == "fake-model"


def test_write_tool_pending_running_completed_with_diff() -> None:
    events = run("tool-write")
    (start,) = of(events, ToolCallStarted)
    assert start.name == "write" and start.kind is ToolKind.EDIT
    updates = of(events, ToolCallUpdated)
    assert any(u.file and u.file.endswith("hello.txt") for u in updates)
    (done,) = of(events, ToolCallCompleted)
    assert done.call_id == start.call_id and done.kind is ToolKind.EDIT
    diffs = of(events, FileDiff)
    assert diffs[0].call_id == start.call_id and diffs[0].new_text == "hi"
    # the turn summary later adds the unified diff of the same file
    assert any(d.diff and "+hi" in d.diff for d in diffs)
    assert events.index(start) < events.index(done) < events.index(of(events, TurnCompleted)[0])


def test_shell_command_output_and_exit_code() -> None:
    events = run("shell-output")
    (start,) = of(events, ToolCallStarted)
    assert start.kind is ToolKind.COMMAND
    (done,) = of(events, ToolCallCompleted)
    assert done.result.output == "one\ntwo\n" and done.result.exit_code == 0


def test_tool_error_is_a_failed_call_not_a_denial() -> None:
    events = run("tool-error")
    (failed,) = of(events, ToolCallFailed)
    assert failed.kind is ToolKind.READ and not failed.denied
    assert "File not found" in failed.error
    assert of(events, TurnCompleted)[0].stop_reason is StopReason.END_TURN


def test_approval_allow_once() -> None:
    events = run("approval-allow")
    (ask,) = of(events, ApprovalRequested)
    assert ask.tool_name == "bash" and ask.kind is ToolKind.COMMAND
    assert ask.cmd == "printf ok > approved.txt" and ask.call_id
    assert [o.id for o in ask.options] == ["once", "always", "reject"]
    replies = [x for x in sent("approval-allow") if x["path"].startswith("/permission/")]
    assert replies[0]["body"] == {"reply": "once"} and replies[0]["status"] == 200
    (resolved,) = of(events, ApprovalResolved)
    assert resolved.decision is ApprovalDecision.ALLOW
    assert of(events, ToolCallCompleted)[0].call_id == ask.call_id
    created = [
        x for x in sent("approval-allow") if (x["method"], x["path"]) == ("POST", "/session")
    ]
    assert created[0]["body"]["permission"] == [
        {"permission": "*", "pattern": "*", "action": "ask"}
    ]


def test_approval_reject_marks_the_call_denied() -> None:
    events = run("approval-deny")
    (ask,) = of(events, ApprovalRequested)
    (resolved,) = of(events, ApprovalResolved)
    assert resolved.decision is ApprovalDecision.DENY
    (failed,) = of(events, ToolCallFailed)
    assert failed.denied and failed.call_id == ask.call_id
    assert not of(events, ToolCallCompleted)
    assert len(of(events, TurnCompleted)) == 1


def test_question_asked_and_answered() -> None:
    events = run("question")
    (asked,) = of(events, QuestionAsked)
    (q,) = asked.questions
    assert q.question == "Which colour do you prefer?" and q.options == ("red", "blue")
    reply = next(x for x in sent("question") if x["path"].startswith("/question/"))
    assert reply["body"] == {"answers": [["blue"]]}
    (answered,) = of(events, QuestionAnswered)
    assert answered.answers == {"Which colour do you prefer?": "blue"}
    assert of(events, TurnCompleted)[0].stop_reason is StopReason.END_TURN


def test_todos_become_a_plan() -> None:
    plans = of(run("todo"), PlanUpdated)
    assert plans
    assert [(e.content, e.status) for e in plans[-1].entries] == [
        ("Write the code", "in_progress"),
        ("Test it", "pending"),
    ]


def test_subagent_events_nest_under_the_task_call() -> None:
    events = run("subagent")
    task = next(s for s in of(events, ToolCallStarted) if s.name == "task")
    assert task.kind is ToolKind.SUBAGENT
    nested = [e for e in of(events, TextDelta) if e.parent_call_id is not None]
    assert nested and {e.parent_call_id for e in nested} == {task.call_id}
    top = [e.text for e in of(events, TextComplete) if e.parent_call_id is None]
    assert top == ["DONE"]
    # the child session going idle does not end the parent's turn
    assert len(of(events, TurnCompleted)) == 1


def test_reasoning_parts() -> None:
    events = run("thinking")
    assert "".join(e.text for e in of(events, ReasoningDelta)) == "Let me think about it."
    assert [e.text for e in of(events, ReasoningComplete)] == ["Let me think about it."]
    assert events.index(of(events, ReasoningDelta)[0]) < events.index(of(events, TextDelta)[0])


def test_abort_ends_the_turn_cancelled() -> None:
    assert any(x["path"].endswith("/abort") for x in sent("cancel-mid-turn"))
    events = run("cancel-mid-turn")
    (end,) = of(events, TurnCompleted)
    assert end.stop_reason is StopReason.CANCELLED
    assert not of(events, ErrorEvent)


def test_prompt_during_a_turn_is_answered_in_the_same_busy_period() -> None:
    prompts = [x for x in sent("input-during-turn") if x["path"].endswith("/prompt_async")]
    assert len(prompts) == 2 and all(p["status"] == 204 for p in prompts)
    events = run("input-during-turn")
    texts = [e.text for e in of(events, TextComplete)]
    assert texts[-1] == "Hello from the scripted model." and len(texts) == 2
    assert len(of(events, TurnCompleted)) == 1


def test_image_goes_out_as_a_data_url_file_part() -> None:
    (prompt,) = [x for x in sent("image-input") if x["path"].endswith("/prompt_async")]
    file_part = prompt["body"]["parts"][1]
    assert file_part["type"] == "file" and file_part["mime"] == "image/png"
    assert file_part["url"].startswith("data:image/png;base64,")
    assert of(run("image-input"), TurnCompleted)[0].stop_reason is StopReason.END_TURN


def test_provider_error_surfaces_and_ends_the_turn_with_error() -> None:
    events = run("error-400")
    errors = of(events, ErrorEvent)
    assert errors and "scripted failure" in errors[0].message
    (end,) = of(events, TurnCompleted)
    assert end.stop_reason is StopReason.ERROR and end.error


def test_events_of_other_sessions_are_dropped() -> None:
    parser = OpenCodeSseParser("ses_mine")
    other = {
        "type": "message.part.delta",
        "properties": {
            "sessionID": "ses_other",
            "messageID": "msg_1",
            "partID": "prt_1",
            "field": "text",
            "delta": "x",
        },
    }
    assert parser.feed(other) == []
    assert (
        parser.feed(
            {
                "type": "session.status",
                "properties": {"sessionID": "ses_other", "status": {"type": "idle"}},
            }
        )
        == []
    )


def test_unknown_and_malformed_events_never_raise() -> None:
    parser = OpenCodeSseParser("ses_mine")
    (unknown,) = parser.feed({"type": "brand.new", "properties": {}})
    assert isinstance(unknown, UnknownEvent) and unknown.vendor_type == "brand.new"
    assert isinstance(parser.feed("nonsense")[0], UnknownEvent)
    assert parser.feed({"type": "plugin.added", "properties": {"id": "x"}}) == []


def test_missed_idle_after_a_reconnect_ends_the_turn() -> None:
    parser = OpenCodeSseParser("ses_mine")
    parser.feed_sent({"method": "POST", "path": "/session/ses_mine/prompt_async", "status": 204})
    parser.feed(
        {
            "type": "session.status",
            "properties": {"sessionID": "ses_mine", "status": {"type": "busy"}},
        }
    )
    (end,) = parser.feed_sent(
        {"method": "GET", "path": "/session/status", "status": 200, "response": {}}
    )
    assert isinstance(end, TurnCompleted) and end.stop_reason is StopReason.END_TURN


def test_stream_ending_mid_turn_is_an_error() -> None:
    parser = OpenCodeSseParser("ses_mine")
    parser.feed_sent({"method": "POST", "path": "/session/ses_mine/prompt_async", "status": 204})
    (end,) = parser.finish()
    assert isinstance(end, TurnCompleted) and end.stop_reason is StopReason.ERROR


def test_rate_limit_shows_a_retry_status_then_the_answer() -> None:
    events = run("error-429")
    retries = [s for s in of(events, StatusChanged) if s.status == "retry"]
    assert retries and "Rate limit" in (retries[0].message or "")
    assert events.index(retries[0]) < events.index(of(events, TextDelta)[0])
    (end,) = of(events, TurnCompleted)
    assert end.stop_reason is StopReason.END_TURN
    assert not of(events, ErrorEvent)


def test_no_handled_event_type_is_also_ignored() -> None:
    """The parser looks a type's handler up before its ignore list, so none may be on both."""
    both = [t for t in _HANDLERS if t in IGNORED_TYPES or t.startswith(_IGNORED_PREFIXES)]
    assert both == []
    assert not {"session.created", "session.updated"} & set(_HANDLERS)
