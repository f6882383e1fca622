"""The ``gemini-exec`` driver (one ``gemini -p`` process per turn) over its recorded transcripts,
through ``ReplayTransport``: argv per turn, ``--resume`` after the first, the cancel, the end."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from corral.adapters.base import iter_events
from corral.adapters.gemini_exec import GeminiExecAdapter
from corral.errors import UnsupportedOperation
from corral.events import (
    EndReason,
    Event,
    FileDiff,
    SessionEnded,
    StopReason,
    TextDelta,
    TurnCompleted,
    Usage,
)
from corral.testing import Recording

ROOT = Path(__file__).parents[2] / "fixtures" / "transcripts" / "gemini-exec" / "0.61.0"

FIXTURES_USED = [
    "gemini-exec/0.61.0/cancel-mid-turn.jsonl",
    "gemini-exec/0.61.0/follow-up.jsonl",
    "gemini-exec/0.61.0/text.jsonl",
    "gemini-exec/0.61.0/tool-write.jsonl",
]


def of(events: list[Event], kind: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


class Driven:
    def __init__(self, recording: Recording, cwd: Path, **init: Any) -> None:
        self.ids: list[str] = []
        self.adapter = GeminiExecAdapter(
            cwd=str(cwd), binary="gemini", on_session_id=self.ids.append, **init
        )
        self.adapter.transport_factory = recording.factory
        self.events: list[Event] = []

    async def until(self, kind: type[Any]) -> Any:
        async def collect() -> Any:
            async for event in iter_events(self.adapter):
                self.events.append(event)
                if isinstance(event, kind):
                    return event
            raise AssertionError(f"the stream ended before a {kind.__name__}")

        return await asyncio.wait_for(collect(), 15)


async def test_text_turn_then_stop(tmp_path: Path) -> None:
    recording = Recording.load(ROOT / "text.jsonl")
    d = Driven(recording, tmp_path, model="fake-model")
    await d.adapter.start("s")
    await d.adapter.send("Say hello.")
    end = await d.until(TurnCompleted)
    await d.adapter.stop()
    await d.until(SessionEnded)
    recording.check()
    argv = recording.transports[0].argv
    assert argv[1:5] == ["--output-format", "stream-json", "--skip-trust", "--model"]
    assert argv[-1] == "--prompt=Say hello."
    assert (
        end.stop_reason is StopReason.END_TURN
        and end.result_text == "Hello from the scripted model."
    )
    assert "".join(e.text for e in of(d.events, TextDelta)) == end.result_text
    assert len(d.ids) == 1  # the session id of init, reported once
    usage = await d.adapter.get_usage()
    assert of(d.events, Usage) and usage.input_tokens == 10
    assert of(d.events, SessionEnded)[0].reason is EndReason.COMPLETED


async def test_follow_up_resumes_the_session_of_the_first_turn(tmp_path: Path) -> None:
    recording = Recording.load(ROOT / "follow-up.jsonl")
    d = Driven(recording, tmp_path)
    await d.adapter.start("s")
    await d.adapter.send("Remember the word apple.")
    await d.until(TurnCompleted)
    await d.adapter.send("Which word did I ask you to remember?")
    await d.until(TurnCompleted)
    await d.adapter.stop()
    await d.until(SessionEnded)
    recording.check()
    first, second = (t.argv for t in recording.transports)
    assert "--resume" not in first
    assert second[second.index("--resume") + 1] == d.ids[0]


async def test_tool_write_under_yolo(tmp_path: Path) -> None:
    recording = Recording.load(ROOT / "tool-write.jsonl")
    d = Driven(recording, tmp_path, permission_mode="yolo")
    await d.adapter.start("s")
    await d.adapter.send("Create hello.txt containing hi.")
    await d.until(TurnCompleted)
    await d.adapter.stop()
    await d.until(SessionEnded)
    recording.check()
    argv = recording.transports[0].argv
    assert argv[argv.index("--approval-mode") + 1] == "yolo"
    assert [f.new_text for f in of(d.events, FileDiff)] == ["hi"]


async def test_interrupt_kills_the_process_and_cancels_the_turn(tmp_path: Path) -> None:
    recording = Recording.load(ROOT / "cancel-mid-turn.jsonl")
    d = Driven(recording, tmp_path)
    await d.adapter.start("s")
    await d.adapter.send("Tell me a long story.")
    await d.until(TextDelta)
    await d.adapter.interrupt()
    end = await d.until(TurnCompleted)
    assert end.stop_reason is StopReason.CANCELLED
    await d.adapter.send("Say hello.")
    after = await d.until(TurnCompleted)
    assert after.stop_reason is StopReason.END_TURN
    await d.adapter.stop()
    await d.until(SessionEnded)
    recording.check()
    # exactly one turn end per turn: the killed process's own finish() adds none
    assert [t.stop_reason for t in of(d.events, TurnCompleted)] == [
        StopReason.CANCELLED,
        StopReason.END_TURN,
    ]


async def test_a_process_dying_mid_turn_fails_the_turn_not_the_session(tmp_path: Path) -> None:
    head = [e for e in Recording.load(ROOT / "text.jsonl").segments[0] if e.get("dir") == "out"][:3]
    recording = Recording([*head, {"dir": "exit", "code": 1}], agent_exits=True)
    d = Driven(recording, tmp_path)
    await d.adapter.start("s")
    await d.adapter.send("Say hello.")
    end = await d.until(TurnCompleted)
    await d.adapter.stop()
    await d.until(SessionEnded)
    assert recording.problems == []
    assert end.stop_reason is StopReason.ERROR
    assert "exited with code 1 before the turn completed" in (end.error or "")
    assert of(d.events, SessionEnded)[0].reason is EndReason.COMPLETED


async def test_input_during_a_turn_is_refused(tmp_path: Path) -> None:
    recording = Recording.load(ROOT / "cancel-mid-turn.jsonl")
    d = Driven(recording, tmp_path)
    await d.adapter.start("s")
    await d.adapter.send("Tell me a long story.")
    await d.until(TextDelta)
    with pytest.raises(UnsupportedOperation, match="input during a turn"):
        await d.adapter.send("more")
    assert (await d.adapter.query_status())["busy"] is True
    await d.adapter.stop()
    await d.until(SessionEnded)
