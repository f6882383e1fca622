"""The Codex parsers on transcripts recorded from codex 0.171.0 (scripts/record_codex.py).

Every recorded file has a check here, and every check has its file: a fixture nobody tests, or a
check whose fixture is gone, fails ``test_every_fixture_has_a_check``.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from corral.events import (
    ApprovalDecision,
    ApprovalRequested,
    ErrorEvent,
    FileDiff,
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
    WarningEvent,
)

from ._codex_replay import DIR, VERSION, Process, fixture_names, replay

# Every transcript this module replays, relative to tests/fixtures/transcripts (a literal list:
# the fixture-usage check reads it without importing the module).
FIXTURES_USED = [
    "codex/0.171.0/approval-allow.jsonl",
    "codex/0.171.0/approval-always.jsonl",
    "codex/0.171.0/approval-deny.jsonl",
    "codex/0.171.0/cancel-mid-turn.jsonl",
    "codex/0.171.0/shell-output.jsonl",
    "codex/0.171.0/error-429.jsonl",
    "codex/0.171.0/exec-error-429.jsonl",
    "codex/0.171.0/exec-resume-after-exit.jsonl",
    "codex/0.171.0/exec-text.jsonl",
    "codex/0.171.0/exec-tool-shell.jsonl",
    "codex/0.171.0/file-change-allow.jsonl",
    "codex/0.171.0/file-change-deny.jsonl",
    "codex/0.171.0/follow-up.jsonl",
    "codex/0.171.0/image-input.jsonl",
    "codex/0.171.0/input-during-turn.jsonl",
    "codex/0.171.0/interrupt-during-approval.jsonl",
    "codex/0.171.0/question.jsonl",
    "codex/0.171.0/thinking.jsonl",
    "codex/0.171.0/resume-after-exit.jsonl",
    "codex/0.171.0/subagent.jsonl",
    "codex/0.171.0/text.jsonl",
    "codex/0.171.0/tool-shell.jsonl",
    "codex/0.171.0/error-400.jsonl",
]

HELLO = "Hello from the scripted model."


def ends(p: Process) -> list[StopReason]:
    return [t.stop_reason for t in p.of(TurnCompleted)]


def text_of(p: Process) -> str:
    return "".join(e.text for e in p.of(TextDelta))


def check_text(ps: list[Process]) -> None:
    (p,) = ps
    assert ends(p) == [StopReason.END_TURN]
    assert len(p.of(TextDelta)) > 1, "app-server streams the text in several deltas"
    assert text_of(p) == HELLO
    assert [c.text for c in p.of(TextComplete)] == [HELLO]
    assert p.of(TurnCompleted)[0].result_text == HELLO
    # the model-metadata warning and the bubblewrap configWarning are surfaced, not fatal
    assert any("fake-model" in w.message for w in p.of(WarningEvent))
    assert not p.of(ErrorEvent)


def check_tool_shell(ps: list[Process]) -> None:
    (p,) = ps
    (start,) = p.of(ToolCallStarted)
    assert start.kind is ToolKind.COMMAND
    assert start.cmd is not None and "shell.txt" in start.cmd
    (done,) = p.of(ToolCallCompleted)
    assert done.call_id == start.call_id
    assert done.result.exit_code == 0
    assert ends(p) == [StopReason.END_TURN]


def _approval(ps: list[Process], wire: str) -> tuple[Process, ApprovalRequested]:
    (p,) = ps
    (asked,) = p.of(ApprovalRequested)
    assert asked.kind is ToolKind.COMMAND
    assert asked.cmd is not None
    assert asked.call_id == p.of(ToolCallStarted)[0].call_id
    decisions = {o.decision for o in asked.options}
    assert {ApprovalDecision.ALLOW, ApprovalDecision.CANCEL} <= decisions
    answers = [m for m in p.sent if "result" in m]
    assert [a["result"]["decision"] for a in answers] == [wire]
    return p, asked


def check_approval_allow(ps: list[Process]) -> None:
    p, asked = _approval(ps, "accept")
    assert "approved.txt" in (asked.cmd or "")
    assert [c.call_id for c in p.of(ToolCallCompleted)] == [asked.call_id]
    assert ends(p) == [StopReason.END_TURN]


def check_approval_deny(ps: list[Process]) -> None:
    p, asked = _approval(ps, "decline")
    (failed,) = p.of(ToolCallFailed)
    assert failed.denied and failed.call_id == asked.call_id
    assert not p.of(ToolCallCompleted)


def check_cancel(ps: list[Process]) -> None:
    (p,) = ps
    assert ends(p) == [StopReason.CANCELLED, StopReason.END_TURN]
    (interrupt,) = p.sent_method("turn/interrupt")
    first_turn = p.sent_method("turn/start")[0]
    assert interrupt["params"]["threadId"] == first_turn["params"]["threadId"]
    assert p.of(TurnCompleted)[0].turn_id == interrupt["params"]["turnId"]


def check_follow_up(ps: list[Process]) -> None:
    (p,) = ps
    assert ends(p) == [StopReason.END_TURN, StopReason.END_TURN]
    assert len(p.sent_method("turn/start")) == 2
    assert len({t.turn_id for t in p.of(TurnCompleted)}) == 2


def check_input_during_turn(ps: list[Process]) -> None:
    (p,) = ps
    (steer,) = p.sent_method("turn/steer")
    assert "SECOND PROMPT" in steer["params"]["input"][0]["text"]
    assert steer["params"]["expectedTurnId"] == p.of(TurnCompleted)[0].turn_id
    assert ends(p) == [StopReason.END_TURN]


def check_resume(ps: list[Process]) -> None:
    first, second = ps
    thread_id = first.sent_method("turn/start")[0]["params"]["threadId"]
    (resume,) = second.sent_method("thread/resume")
    assert resume["params"]["threadId"] == thread_id
    assert resume["params"]["excludeTurns"] is True
    assert ends(first) == ends(second) == [StopReason.END_TURN]


def check_image(ps: list[Process]) -> None:
    (p,) = ps
    (turn,) = p.sent_method("turn/start")
    kinds = [i["type"] for i in turn["params"]["input"]]
    assert kinds == ["text", "localImage"]
    assert ends(p) == [StopReason.END_TURN]


def check_error_429(ps: list[Process]) -> None:
    (p,) = ps
    (err,) = p.of(ErrorEvent)
    assert err.code == "responseStreamDisconnected:429"
    assert err.fatal is False, "codex retries (willRetry: true)"
    assert text_of(p) == HELLO
    assert ends(p) == [StopReason.END_TURN]


def _file_change(ps: list[Process], wire: str, filename: str) -> tuple[Process, ApprovalRequested]:
    (p,) = ps
    (start,) = p.of(ToolCallStarted)
    assert start.kind is ToolKind.EDIT and (start.file or "").endswith(filename)
    (asked,) = p.of(ApprovalRequested)
    assert asked.kind is ToolKind.EDIT and asked.call_id == start.call_id
    assert (asked.file or "").endswith(filename)
    assert [o.id for o in asked.options] == ["accept", "acceptForSession", "decline", "cancel"]
    answers = [m["result"]["decision"] for m in p.sent if "result" in m]
    assert answers == [wire]
    assert ends(p) == [StopReason.END_TURN]
    return p, asked


def check_file_change_allow(ps: list[Process]) -> None:
    p, asked = _file_change(ps, "accept", "allowed.txt")
    (diff,) = p.of(FileDiff)
    assert diff.path.endswith("allowed.txt") and diff.call_id == asked.call_id
    assert diff.new_text == "hi\n"
    assert diff.diff is not None and diff.diff.endswith("@@ -0,0 +1 @@\n+hi\n")
    (done,) = p.of(ToolCallCompleted)
    assert done.call_id == asked.call_id and done.kind is ToolKind.EDIT


def check_file_change_deny(ps: list[Process]) -> None:
    p, asked = _file_change(ps, "decline", "refused.txt")
    (failed,) = p.of(ToolCallFailed)
    assert failed.denied and failed.call_id == asked.call_id and failed.kind is ToolKind.EDIT
    assert not p.of(ToolCallCompleted)


def check_command_output(ps: list[Process]) -> None:
    (p,) = ps
    (start,) = p.of(ToolCallStarted)
    deltas = [u for u in p.of(ToolCallUpdated) if u.call_id == start.call_id]
    (done,) = p.of(ToolCallCompleted)
    assert done.result.output == "line1\nline2\nline3\n" and done.result.exit_code == 0
    # output that came before codex's first yield is not re-sent as a delta (0.171: line1)
    streamed = "".join(u.output_delta or "" for u in deltas)
    assert len(deltas) >= 2 and done.result.output.endswith(streamed)
    assert p.events.index(deltas[-1]) < p.events.index(done)


def check_subagent(ps: list[Process]) -> None:
    (p,) = ps
    (spawn,) = [e for e in p.of(ToolCallStarted) if e.kind is ToolKind.SUBAGENT]
    assert spawn.name == "spawnAgent"
    child = [e for e in p.of(TextComplete) if e.parent_call_id is not None]
    assert [(e.text, e.parent_call_id) for e in child] == [("child says hi", spawn.call_id)]
    # two prompts, two turns: the child's turn is a status, not a third TurnCompleted
    assert ends(p) == [StopReason.END_TURN, StopReason.END_TURN]
    assert "subagent.completed" in [e.status for e in p.of(StatusChanged)]
    assert all(t.result_text != "child says hi" for t in p.of(TurnCompleted))


def check_reasoning(ps: list[Process]) -> None:
    (p,) = ps
    assert [d.text for d in p.of(ReasoningDelta)] == ["Let me weigh the options."]
    (done,) = p.of(ReasoningComplete)
    assert done.text == "Let me weigh the options."
    assert ends(p) == [StopReason.END_TURN]


def check_turn_failed(ps: list[Process]) -> None:
    (p,) = ps
    (err,) = p.of(ErrorEvent)
    assert err.fatal and err.code == "other" and "scripted rejection" in err.message
    failed, recovered = p.of(TurnCompleted)
    assert failed.stop_reason is StopReason.ERROR and "scripted rejection" in (failed.error or "")
    assert recovered.stop_reason is StopReason.END_TURN


def check_question(ps: list[Process]) -> None:
    (p,) = ps
    (asked,) = p.of(QuestionAsked)
    (q,) = asked.questions
    assert q.question == "Which colour do you prefer?" and q.options == ("red", "blue")
    (answer,) = [m for m in p.sent if "result" in m]
    assert answer["result"] == {"answers": {"q1": {"answers": ["blue"]}}}
    assert ends(p) == [StopReason.END_TURN]


def check_interrupt_during_approval(ps: list[Process]) -> None:
    (p,) = ps
    (start,) = p.of(ToolCallStarted)
    (asked,) = p.of(ApprovalRequested)
    assert asked.call_id == start.call_id
    # codex sent no item/completed for the command: the turn's end closes it
    (failed,) = p.of(ToolCallFailed)
    assert failed.call_id == start.call_id and "interrupted" in failed.error
    assert p.events.index(failed) < p.events.index(p.of(TurnCompleted)[0])
    assert ends(p) == [StopReason.CANCELLED, StopReason.END_TURN]
    # the driver withdrew the pending request after the turn ended; codex then resolved it
    answers = [m["result"] for m in p.sent if "result" in m]
    assert answers == [{"decision": "cancel"}]
    assert p.sent_method("turn/interrupt")


def check_approval_always(ps: list[Process]) -> None:
    (p,) = ps
    (asked,) = p.of(ApprovalRequested)
    always = [o for o in asked.options if o.decision is ApprovalDecision.ALLOW_ALWAYS]
    assert [o.id for o in always] == ["acceptWithExecpolicyAmendment"]
    (answer,) = [m["result"]["decision"] for m in p.sent if "result" in m]
    assert list(answer) == ["acceptWithExecpolicyAmendment"]  # the offered object, verbatim
    assert len(p.of(ToolCallCompleted)) == 2  # the second run was not asked
    assert ends(p) == [StopReason.END_TURN]


def check_usage_everywhere(ps: list[Process]) -> None:
    for p in ps:
        assert any((u.input_tokens or 0) > 0 and (u.output_tokens or 0) > 0 for u in p.of(Usage))


# ── exec ──


def check_exec_text(ps: list[Process]) -> None:
    (p,) = ps
    assert p.exit_code == 0
    assert text_of(p) == HELLO
    assert ends(p) == [StopReason.END_TURN]
    (usage,) = p.of(Usage)
    assert usage.input_tokens == 10 and usage.output_tokens == 5
    assert any("fake-model" in w.message for w in p.of(WarningEvent))


def check_exec_tool_shell(ps: list[Process]) -> None:
    (p,) = ps
    (start,) = p.of(ToolCallStarted)
    assert start.kind is ToolKind.COMMAND and "shell.txt" in (start.cmd or "")
    (done,) = p.of(ToolCallCompleted)
    assert done.call_id == start.call_id and done.result.exit_code == 0
    assert ends(p) == [StopReason.END_TURN]


def check_exec_resume(ps: list[Process]) -> None:
    first, second = ps
    thread_id = first.received[0]["thread_id"]
    argv_hint = second.received[0]
    assert argv_hint == {"type": "thread.started", "thread_id": thread_id}
    assert ends(first) == ends(second) == [StopReason.END_TURN]


def check_exec_error_429(ps: list[Process]) -> None:
    (p,) = ps
    (err,) = p.of(ErrorEvent)
    assert "429" in err.message and not err.fatal
    assert text_of(p) == HELLO
    assert ends(p) == [StopReason.END_TURN]


CHECKS: dict[str, Callable[[list[Process]], None]] = {
    "text": check_text,
    "tool-shell": check_tool_shell,
    "approval-allow": check_approval_allow,
    "approval-deny": check_approval_deny,
    "cancel-mid-turn": check_cancel,
    "follow-up": check_follow_up,
    "input-during-turn": check_input_during_turn,
    "resume-after-exit": check_resume,
    "image-input": check_image,
    "file-change-allow": check_file_change_allow,
    "file-change-deny": check_file_change_deny,
    "shell-output": check_command_output,
    "subagent": check_subagent,
    "thinking": check_reasoning,
    "error-400": check_turn_failed,
    "question": check_question,
    "interrupt-during-approval": check_interrupt_during_approval,
    "approval-always": check_approval_always,
    "error-429": check_error_429,
    "exec-text": check_exec_text,
    "exec-tool-shell": check_exec_tool_shell,
    "exec-resume-after-exit": check_exec_resume,
    "exec-error-429": check_exec_error_429,
}


def test_every_fixture_has_a_check() -> None:
    assert set(fixture_names()) == set(CHECKS)
    assert sorted(FIXTURES_USED) == [f"codex/{VERSION}/{name}.jsonl" for name in sorted(CHECKS)]
    for name in CHECKS:  # the recorder's sidecar: what produced the transcript
        meta = json.loads((DIR / f"{name}.meta.json").read_text())
        assert meta["cli"] == "codex" and meta["version"] == VERSION
        assert meta["command"].startswith("python scripts/record_codex.py")


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_fixture(name: str) -> None:
    processes = replay(name)
    CHECKS[name](processes)
    check_usage_everywhere([p for p in processes if p.of(TurnCompleted)])
    for p in processes:
        assert p.exit_code == 0
        unknown = [e.vendor_type for e in p.of(UnknownEvent)]
        assert unknown == [], f"unmapped codex messages: {unknown}"
        for event in p.events:
            assert event.raw is not None or isinstance(event, TurnCompleted)
