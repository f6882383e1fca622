"""The ``opencode-run`` driver over its recorded transcripts, through ``ReplayTransport``: one
``opencode run`` process per prompt, ``--session`` after the first, attachments as ``--file``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from corral.adapters.base import Attachment, iter_events
from corral.adapters.opencode_run import OpenCodeRunAdapter
from corral.errors import ConfigError, UnsupportedOperation
from corral.events import EndReason, Event, SessionEnded, StopReason, TextDelta, TurnCompleted
from corral.testing import Recording

ROOT = Path(__file__).parents[2] / "fixtures" / "transcripts"
V = "opencode-run/1.18.33"
FIXTURES_USED = [
    f"{V}/{n}.jsonl" for n in ("text", "follow-up", "resume-after-exit", "image-input", "error-400")
]
MODEL = "corral/fake-model"


def adapter_for(recording: Recording, tmp_path: Path, **options: Any) -> OpenCodeRunAdapter:
    adapter = OpenCodeRunAdapter(cwd=str(tmp_path), binary="opencode", model=MODEL, **options)
    adapter.transport_factory = recording.factory
    return adapter


def contents(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() else None


async def until(adapter: OpenCodeRunAdapter, kind: type[Any], into: list[Event]) -> None:
    async def collect() -> None:
        async for event in iter_events(adapter):
            into.append(event)
            if isinstance(event, kind):
                return

    await asyncio.wait_for(collect(), 15)


async def test_text_turn_then_stop(tmp_path: Path) -> None:
    recording = Recording.load(ROOT / V / "text.jsonl")
    ids: list[str] = []
    adapter = adapter_for(recording, tmp_path, on_session_id=ids.append)
    events: list[Event] = []
    await adapter.start("s")
    await adapter.send("Say hello.")
    await until(adapter, TurnCompleted, events)
    await adapter.stop()
    await until(adapter, SessionEnded, events)
    recording.check()
    argv = recording.transports[0].argv
    assert list(argv[1:7]) == ["run", "--format", "json", "--thinking", "--model", MODEL]
    assert list(argv[-2:]) == ["--", "Say hello."]
    assert "--session" not in argv
    assert [e.text for e in events if isinstance(e, TextDelta)] == [
        "Hello from the scripted model."
    ]
    assert ids and ids[0].startswith("ses_")
    end = events[-1]
    assert isinstance(end, SessionEnded) and end.reason is EndReason.COMPLETED


async def test_follow_up_runs_a_second_process_on_the_same_session(tmp_path: Path) -> None:
    recording = Recording.load(ROOT / V / "follow-up.jsonl")
    adapter = adapter_for(recording, tmp_path)
    events: list[Event] = []
    await adapter.start("s")
    await adapter.send("Remember the word apple.")
    await until(adapter, TurnCompleted, events)
    await adapter.send("Which word did I ask you to remember?")
    await until(adapter, TurnCompleted, events)
    await adapter.stop()
    recording.check()
    first, second = (t.argv for t in recording.transports)
    assert "--session" not in first
    sid = second[second.index("--session") + 1]
    assert sid.startswith("ses_") and sid == adapter.session_id


async def test_resume_starts_with_the_session_flag(tmp_path: Path) -> None:
    recording = Recording.load(ROOT / V / "resume-after-exit.jsonl")
    ids: list[str] = []
    first = adapter_for(recording, tmp_path, on_session_id=ids.append)
    events: list[Event] = []
    await first.start("a")
    await first.send("Remember the word walnut.")
    await until(first, TurnCompleted, events)
    await first.stop()
    second = adapter_for(recording, tmp_path, resume_session_id=ids[0])
    await second.start("b")
    await second.send("Which word did I ask you to remember?")
    await until(second, TurnCompleted, events)
    await second.stop()
    recording.check()
    argv = recording.transports[1].argv
    assert argv[argv.index("--session") + 1] == ids[0]


async def test_an_image_goes_out_as_a_file_argument(tmp_path: Path) -> None:
    recording = Recording.load(ROOT / V / "image-input.jsonl")
    adapter = adapter_for(recording, tmp_path)
    events: list[Event] = []
    await adapter.start("s")
    image = Attachment(data=b"\x89PNG\r\n", media_type="image/png", name="pixel.png")
    await adapter.send("What is in this image?", [image])
    await until(adapter, TurnCompleted, events)
    argv = list(recording.transports[0].argv)
    path = Path(argv[argv.index("--file") + 1])
    assert path.name.endswith("pixel.png") and contents(path) == b"\x89PNG\r\n"
    await adapter.stop()
    recording.check()
    assert contents(path) is None  # the attachment's temp copy goes with the session


async def test_refused_request_fails_the_turn_and_not_the_session(tmp_path: Path) -> None:
    recording = Recording.load(ROOT / V / "error-400.jsonl")
    adapter = adapter_for(recording, tmp_path)
    events: list[Event] = []
    await adapter.start("s")
    await adapter.send("Say hello.")
    await until(adapter, TurnCompleted, events)
    await adapter.stop()
    await until(adapter, SessionEnded, events)
    recording.check()
    [turn] = [e for e in events if isinstance(e, TurnCompleted)]
    assert turn.stop_reason is StopReason.ERROR
    assert "fake-model refuses this request" in (turn.error or "")
    assert isinstance(events[-1], SessionEnded) and events[-1].reason is EndReason.COMPLETED


async def test_a_prompt_during_a_turn_is_refused(tmp_path: Path) -> None:
    recording = Recording.load(ROOT / V / "text.jsonl")
    adapter = adapter_for(recording, tmp_path)
    await adapter.start("s")
    await adapter.send("Say hello.")  # its process has printed nothing yet: the turn runs
    with pytest.raises(UnsupportedOperation, match="input during a turn"):
        await adapter.send("and another")
    await adapter.stop()


async def test_bare_model_name_is_refused_before_a_process_starts(tmp_path: Path) -> None:
    recording = Recording([])
    adapter = adapter_for(recording, tmp_path)
    adapter.model = "fake-model"
    await adapter.start("s")
    with pytest.raises(ConfigError, match="provider/model"):
        await adapter.send("Say hello.")
    with pytest.raises(ConfigError, match="provider/model"):
        await adapter.set_model("other")
    await adapter.set_model("corral/other")
    assert adapter.model == "corral/other"
    assert recording.transports == []
    await adapter.stop()


def test_permission_mode_and_effort_are_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedOperation, match="effort"):
        OpenCodeRunAdapter(cwd=str(tmp_path), binary="opencode", effort="high")
    with pytest.raises(UnsupportedOperation, match="permission_mode"):
        OpenCodeRunAdapter(cwd=str(tmp_path), binary="opencode", permission_mode="ask")
