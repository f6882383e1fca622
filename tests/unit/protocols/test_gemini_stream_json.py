"""The ``gemini -p --output-format stream-json`` parser on transcripts recorded from Gemini CLI
0.61.0 (``corral record gemini-exec all``), and on malformed lines no recording holds.

Every recorded file has a check here, and every check has its file.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from corral.events import (
    Error,
    ErrorEvent,
    Event,
    FileDiff,
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
    WarningEvent,
)
from corral.protocols.gemini_stream_json import GeminiStreamParser

DIR = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts" / "gemini-exec" / "0.61.0"

FIXTURES_USED = [
    "gemini-exec/0.61.0/cancel-mid-turn.jsonl",
    "gemini-exec/0.61.0/error-400.jsonl",
    "gemini-exec/0.61.0/error-429.jsonl",
    "gemini-exec/0.61.0/follow-up.jsonl",
    "gemini-exec/0.61.0/image-input.jsonl",
    "gemini-exec/0.61.0/resume-after-exit.jsonl",
    "gemini-exec/0.61.0/text.jsonl",
    "gemini-exec/0.61.0/tool-shell.jsonl",
    "gemini-exec/0.61.0/tool-write.jsonl",
    "gemini-exec/0.61.0/usage.jsonl",
]

HELLO = "Hello from the scripted model."


class Run:
    """One process of a recording: its parser's events and its exit code."""

    def __init__(self) -> None:
        self.parser = GeminiStreamParser()
        self.events: list[Event] = []
        self.exit_code: int | None = None

    def of(self, cls: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, cls)]

    @property
    def ends(self) -> list[StopReason]:
        return [t.stop_reason for t in self.of(TurnCompleted)]


def replay(name: str) -> list[Run]:
    runs: list[Run] = []
    current: Run | None = None
    for text in (DIR / f"{name}.jsonl").read_text().splitlines():
        entry = json.loads(text)
        current = current or Run()
        if entry["dir"] == "exit":
            current.exit_code = entry["code"]
            current.events += current.parser.finish(entry["code"])
            runs.append(current)
            current = None
        elif entry["dir"] == "out":
            current.events += current.parser.feed(entry["line"])
    assert current is None, "a recording ends with its last process's exit"
    return runs


def text_of(run: Run) -> str:
    return "".join(e.text for e in run.of(TextDelta))


def check_text(runs: list[Run]) -> None:
    (run,) = runs
    assert run.ends == [StopReason.END_TURN]
    assert len(run.of(TextDelta)) > 1, "gemini streams the text in several deltas"
    assert text_of(run) == HELLO
    assert [c.text for c in run.of(TextComplete)] == [HELLO]
    assert run.of(TurnCompleted)[0].result_text == HELLO
    assert isinstance(run.events[0], StatusChanged)  # init
    assert run.parser.session_id and run.parser.model == "fake-model"
    assert not run.of(UnknownEvent) and not run.of(ErrorEvent)


def check_tool_write(runs: list[Run]) -> None:
    (run,) = runs
    (start,) = run.of(ToolCallStarted)
    assert start.name == "write_file" and start.kind is ToolKind.EDIT
    assert start.file is not None and start.file.endswith("/hello.txt")
    (diff,) = run.of(FileDiff)
    assert diff.path == start.file and diff.new_text == "hi" and diff.call_id == start.call_id
    assert diff.diff is not None and "+hi" in diff.diff
    (done,) = run.of(ToolCallCompleted)
    assert done.call_id == start.call_id and done.name == "write_file"
    # the text after the call is a message of its own, and the turn's result
    assert [c.text for c in run.of(TextComplete)] == ["DONE"]
    assert run.of(TurnCompleted)[0].result_text == "DONE"
    assert run.ends == [StopReason.END_TURN]


def check_tool_shell(runs: list[Run]) -> None:
    (run,) = runs
    (start,) = run.of(ToolCallStarted)
    assert start.name == "run_shell_command" and start.kind is ToolKind.COMMAND
    assert start.cmd == "printf hi > shell.txt"
    (done,) = run.of(ToolCallCompleted)
    assert done.call_id == start.call_id and done.result.output == ""
    assert not run.of(FileDiff)
    assert run.ends == [StopReason.END_TURN]


def check_cancel(runs: list[Run]) -> None:
    cancelled, after = runs
    # the driver killed the first process mid-text: gemini printed no result and exited 0
    assert cancelled.exit_code == 0
    assert text_of(cancelled).startswith("Once upon a time")
    assert cancelled.ends == [StopReason.ERROR]  # without the driver's word, finish() fails it
    assert "exited with code 0 before the turn completed" in (
        cancelled.of(TurnCompleted)[0].error or ""
    )
    assert [c.text for c in cancelled.of(TextComplete)] == [text_of(cancelled)]
    assert after.ends == [StopReason.END_TURN] and text_of(after) == HELLO
    assert cancelled.parser.session_id == after.parser.session_id  # resumed


def check_two_runs_one_session(runs: list[Run]) -> None:
    first, second = runs
    assert first.ends == second.ends == [StopReason.END_TURN]
    assert first.parser.session_id == second.parser.session_id


def check_image(runs: list[Run]) -> None:
    (run,) = runs
    assert run.ends == [StopReason.END_TURN] and text_of(run) == HELLO


def check_usage(runs: list[Run]) -> None:
    (run,) = runs
    (usage,) = run.of(Usage)
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (1234, 56, 0)
    assert usage.model == "fake-model"
    assert run.of(TurnCompleted)[0].stop_reason is StopReason.END_TURN


def check_429(runs: list[Run]) -> None:
    (run,) = runs
    # gemini retries the 429 itself and says so only on stderr: stdout shows a plain turn
    assert run.ends == [StopReason.END_TURN] and text_of(run) == HELLO


def check_400(runs: list[Run]) -> None:
    (run,) = runs
    (end,) = run.of(TurnCompleted)
    assert end.stop_reason is StopReason.ERROR
    assert end.error is not None and "fake-model refuses this request" in end.error
    assert run.exit_code != 0
    assert not run.of(TextDelta)


CHECKS: dict[str, Callable[[list[Run]], None]] = {
    "text": check_text,
    "tool-write": check_tool_write,
    "tool-shell": check_tool_shell,
    "cancel-mid-turn": check_cancel,
    "follow-up": check_two_runs_one_session,
    "resume-after-exit": check_two_runs_one_session,
    "image-input": check_image,
    "usage": check_usage,
    "error-429": check_429,
    "error-400": check_400,
}


def test_every_fixture_has_a_check() -> None:
    recorded = sorted(p.name.removesuffix(".jsonl") for p in DIR.glob("*.jsonl"))
    assert recorded == sorted(CHECKS)
    assert sorted(f"gemini-exec/0.61.0/{n}.jsonl" for n in CHECKS) == sorted(FIXTURES_USED)


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_recorded(name: str) -> None:
    CHECKS[name](replay(name))


# ── lines no recording holds (the format's other branches, and malformed input) ──


def test_error_lines_are_warnings_or_errors_by_severity() -> None:
    p = GeminiStreamParser()
    (w,) = p.feed({"type": "error", "severity": "warning", "message": "Loop detected"})
    (e,) = p.feed({"type": "error", "severity": "error", "message": "Maximum session turns"})
    assert isinstance(w, WarningEvent) and w.message == "Loop detected"
    assert isinstance(e, ErrorEvent) and e.message == "Maximum session turns"


def test_a_failed_tool_result_carries_the_error() -> None:
    p = GeminiStreamParser()
    p.feed({"type": "tool_use", "tool_name": "read_file", "tool_id": "t1", "parameters": {}})
    (failed,) = p.feed(
        {
            "type": "tool_result",
            "tool_id": "t1",
            "status": "error",
            "output": "",
            "error": {"type": "FILE_NOT_FOUND", "message": "no such file"},
        }
    )
    assert isinstance(failed, ToolCallFailed)
    assert failed.error == "no such file" and failed.kind is ToolKind.READ
    assert failed.result is not None and failed.result.is_error and not failed.denied


def test_a_whole_message_is_completed_at_once() -> None:
    p = GeminiStreamParser()
    events = p.feed({"type": "message", "role": "assistant", "content": "all of it"})
    assert [type(e) for e in events] == [TextDelta, TextComplete]


def test_a_run_without_result_fails_naming_the_exit_code_and_stderr() -> None:
    p = GeminiStreamParser()
    p.feed({"type": "init", "session_id": "s", "model": "m"})
    p.feed({"type": "message", "role": "assistant", "content": "par", "delta": True})
    events = p.finish(42, "Error resuming session: Invalid session identifier")
    assert [type(e) for e in events] == [TextComplete, TurnCompleted]
    end = events[-1]
    assert isinstance(end, TurnCompleted) and end.stop_reason is StopReason.ERROR
    assert "code 42" in (end.error or "") and "Invalid session identifier" in (end.error or "")
    assert p.finish(0) == []  # once


def test_cancelled_ends_the_turn_cancelled_once() -> None:
    p = GeminiStreamParser()
    (end,) = p.cancelled()
    assert isinstance(end, TurnCompleted) and end.stop_reason is StopReason.CANCELLED
    assert p.cancelled() == [] and p.finish(0) == []


@pytest.mark.parametrize(
    "line",
    [
        {"type": "mystery", "x": 1},
        {"type": None},
        {},
        {"type": "message", "role": "assistant", "content": ["not", "text"], "delta": True},
        {"type": "message", "role": "assistant", "content": "\ud83d", "delta": True},
        {"type": "tool_use", "tool_name": ["x"], "tool_id": {"a": 1}, "parameters": "str"},
        {"type": "tool_result", "tool_id": None, "status": 3, "error": "flat"},
        {"type": "tool_result", "tool_id": "never-started", "status": "success"},
        {"type": "result", "status": "success", "stats": "none"},
        {"type": "result", "status": "error", "error": ["x"], "stats": {"input_tokens": "1"}},
        {"type": "init", "session_id": 5, "model": {"m": 1}},
        {"type": "error", "severity": None, "message": {"deep": [1]}},
    ],
)
def test_malformed_lines_never_raise(line: dict[str, Any]) -> None:
    p = GeminiStreamParser()
    events = p.feed(line)
    events += p.finish(1)
    assert all(not (isinstance(e, Error) and e.code == "parse_error") for e in events), events
    assert isinstance(events[-1], TurnCompleted)


def test_a_non_object_is_unknown() -> None:
    (event,) = GeminiStreamParser().feed([1, 2])  # type: ignore[arg-type]
    assert isinstance(event, UnknownEvent)
