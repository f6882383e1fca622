"""Recorded aider-plain transcripts (``corral record aider-plain SCENARIO``) replayed into the real
plain driver: each recorded process (its stdout chunks, as read, up to its exit) becomes one
replayed process, so chunk splits, the banner, exit codes and the turn ends run the live code.

The recorder writes a chunk as ``{"dir": "out", "text": ...}``; a chunk that happened to be valid
JSON would be stored as ``"line"`` and lose its exact bytes, so these fixtures are checked to hold
text entries only. The recorded ``cancel-mid-turn`` is the generic scenario on aider: its cancel
lands on the first text, aider's banner, before the story is asked for; the real-CLI test
``test_aider_plain_cancel_while_the_answer_streams`` cancels mid-answer.
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from corral.adapters.aider_plain import AiderPlainAdapter
from corral.events import Event, StopReason, TextDelta, TurnCompleted
from corral.protocols.plain import PlainParser

TRANSCRIPTS = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"
FIXTURES_USED = [
    "aider-plain/0.86.2/text.jsonl",
    "aider-plain/0.86.2/follow-up.jsonl",
    "aider-plain/0.86.2/cancel-mid-turn.jsonl",
    "aider-plain/0.86.2/resume-after-exit.jsonl",
    "aider-plain/0.86.2/error-429.jsonl",
]
ANSWERED = [FIXTURES_USED[i] for i in (1, 3, 4)]
"""Fixtures whose every recorded process answered its prompt."""
HELLO = "Hello from the scripted model."


def processes(rel: str) -> list[tuple[list[bytes], int]]:
    """Each recorded process: its stdout chunks and its exit code."""
    out: list[tuple[list[bytes], int]] = []
    chunks: list[bytes] = []
    for line in (TRANSCRIPTS / rel).read_text("utf-8").splitlines():
        entry = json.loads(line)
        if entry["dir"] == "out":
            assert "text" in entry, f"{rel}: a stdout chunk was not kept as text: {entry}"
            chunks.append(entry["text"].encode())
        elif entry["dir"] == "exit":
            out.append((chunks, entry["code"]))
            chunks = []
    assert not chunks, f"{rel}: output after the last exit"
    return out


class Replayed:
    """One recorded process, as the plain driver's ChunkTransport."""

    def __init__(self, chunks: list[bytes], code: int, argv: Sequence[str]) -> None:
        self.argv = list(argv)
        self.killed_by_us = False
        self._chunks = chunks
        self._code = code
        self.returncode: int | None = None
        self.pid: int | None = None
        self.stderr_tail = ""

    async def start(self) -> None:
        pass

    async def chunks(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            await asyncio.sleep(0)
            yield chunk
        self.returncode = self._code

    async def write_line(self, data: bytes) -> None:
        pass

    def close_stdout(self) -> None:
        pass

    async def close_stdin(self) -> None:
        pass

    async def wait(self, timeout: float | None = None) -> int:
        self.returncode = self._code
        return self._code

    async def kill(self, grace: float = 3.0) -> int | None:
        if self.returncode is None:
            self.killed_by_us = True
            self.returncode = -signal.SIGTERM
        return self.returncode

    def signal_group(self, sig: signal.Signals) -> None:
        if self.returncode is None:
            self.returncode = -sig


async def replay(rel: str, prompts: list[str], tmp_path: Path) -> list[list[Event]]:
    recorded = iter(processes(rel))
    adapter = AiderPlainAdapter(cwd=str(tmp_path), binary="aider", history_root=str(tmp_path / "h"))

    def factory(argv: Sequence[str], *, env: Mapping[str, str] | None = None, **kw: Any) -> Any:
        chunks, code = next(recorded)
        return Replayed(chunks, code, argv)

    adapter.transport_factory = factory
    await adapter.start("s")
    stream = adapter.stream()
    turns: list[list[Event]] = []
    for prompt in prompts:
        await adapter.send(prompt)
        events: list[Event] = []
        async with asyncio.timeout(10):
            while not isinstance(event := await anext(stream), TurnCompleted):
                events.append(event)
        turns.append([*events, event])
    await adapter.stop()
    return turns


def text(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_text(tmp_path: Path) -> None:
    (turn,) = await replay(FIXTURES_USED[0], ["Say hello."], tmp_path)
    assert HELLO in text(turn)
    assert "Aider v0.86.2" in text(turn)  # the banner is part of what aider prints
    end = turn[-1]
    assert isinstance(end, TurnCompleted) and end.stop_reason is StopReason.END_TURN


@pytest.mark.parametrize("rel", ANSWERED)
async def test_every_recorded_process_is_one_answered_turn(rel: str, tmp_path: Path) -> None:
    count = len(processes(rel))
    turns = await replay(rel, [f"prompt {i}" for i in range(count)], tmp_path)
    assert len(turns) == count
    for turn in turns:
        assert HELLO in text(turn)
        end = turn[-1]
        assert isinstance(end, TurnCompleted) and end.stop_reason is StopReason.END_TURN


def test_cancel_mid_turn_was_recorded_as_two_processes() -> None:
    (story, story_code), (hello, hello_code) = processes(FIXTURES_USED[2])
    assert story_code == -signal.SIGINT  # the cancel's SIGINT ended the first process
    assert b"Once upon" not in b"".join(story)  # it landed in the banner (see the docstring)
    assert hello_code == 0
    parser = PlainParser()
    events = [e for c in hello for e in parser.feed(c)] + parser.finish(hello_code)
    assert HELLO in text(events)


@pytest.mark.parametrize("rel", FIXTURES_USED)
def test_any_split_of_the_recorded_bytes_gives_the_same_text(rel: str) -> None:
    for chunks, code in processes(rel):
        data = b"".join(chunks)
        whole, bytewise = PlainParser(), PlainParser()
        one = whole.feed(data) + whole.finish(code)
        many = [e for i in range(len(data)) for e in bytewise.feed(data[i : i + 1])]
        many += bytewise.finish(code)
        assert text(one) == text(many) == data.decode()
