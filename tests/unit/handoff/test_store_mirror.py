"""The live transcript mirror: appended bytes only, cut lines, truncation, rotation, garbage.

Each test replays a recorded transcript (``corral record AGENT store``) into a file the mirror is
watching, the way the CLI grows it, and checks what comes out.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from corral.adapters._store_tail import JsonlTail
from corral.adapters._stores import scan
from corral.events import Event, TextComplete, TurnCompleted

from ._recorded import Recorded, parse_all, recorded

JSONL_CLIS = ["claude", "codex", "gemini", "qwen", "pi"]


@pytest.fixture(params=JSONL_CLIS)
def rec(request: pytest.FixtureRequest, tmp_path: Path) -> Recorded:
    return recorded(request.param, tmp_path)


async def take(events: AsyncIterator[Event], n: int, timeout: float = 10.0) -> list[Event]:
    out: list[Event] = []

    async def run() -> None:
        async for event in events:
            out.append(event)
            if len(out) >= n:
                return

    await asyncio.wait_for(run(), timeout)
    return out


def _setup(rec: Recorded) -> tuple[Path, bytes, list[Any], Any]:
    (entry,) = scan(rec.module, rec.env)
    path = Path(entry.path)
    data = path.read_bytes()
    expected = parse_all(rec.module, path)
    mirror = rec.module.mirror(rec.cwd, entry.sid, rec.env)
    assert isinstance(mirror, JsonlTail)
    mirror.interval, mirror.max_interval = 0.01, 0.05
    return path, data, expected, mirror


def _after_first_event(rec: Recorded, data: bytes) -> int:
    """An offset inside the line after the first one that makes an event."""
    from corral._process._decode import loads

    parser, offset = rec.module.Parser(), 0
    for line in data.splitlines(keepends=True):
        offset += len(line)
        if line.strip() and parser.feed(loads(line)):
            return offset + 10
    raise AssertionError("no event in the transcript")


async def test_mirror_replays_then_follows_appends_split_mid_line(rec: Recorded) -> None:
    path, data, expected, mirror = _setup(rec)
    cut = _after_first_event(rec, data)
    path.write_bytes(data[:cut])
    events = mirror.events()
    try:
        first = await take(events, 1)
        with path.open("ab") as handle:  # the rest, in two writes that split a line
            handle.write(data[cut : cut + 7])
            handle.flush()
            await asyncio.sleep(0.1)
            handle.write(data[cut + 7 :])
        rest = await take(events, len(expected) - 1)
    finally:
        await mirror.close()
    assert first + rest == expected
    assert mirror.resets == 0


async def test_mirror_waits_for_a_transcript_that_does_not_exist_yet(rec: Recorded) -> None:
    path, data, expected, mirror = _setup(rec)
    for other in path.parent.iterdir():  # this session's files (Gemini keeps a resume stub)
        if other.is_file():
            other.unlink()
    events = mirror.events()
    try:
        task = asyncio.ensure_future(take(events, len(expected)))
        await asyncio.sleep(0.2)
        assert not task.done()
        path.write_bytes(data)
        assert await task == expected
    finally:
        await mirror.close()


async def test_truncation_and_rotation_start_over(rec: Recorded) -> None:
    path, data, expected, mirror = _setup(rec)
    events = mirror.events()
    try:
        assert await take(events, len(expected)) == expected
        path.write_bytes(data[: data.index(b"\n") + 1])  # truncated: shorter than what we read
        await asyncio.sleep(0.3)
        replacement = path.with_suffix(".new")
        replacement.write_bytes(data)
        os.replace(replacement, path)  # rotated: another inode, same name
        again = await take(events, len(expected))
    finally:
        await mirror.close()
    assert again == expected
    assert mirror.resets >= 1


async def test_garbage_lines_are_skipped_and_close_ends_the_stream(rec: Recorded) -> None:
    path, data, expected, mirror = _setup(rec)
    junk = b'not json\n{"type": "assistant", "message": 7}\n[1, 2]\n\xff\xfe\n{}\n'
    lines = data.splitlines(keepends=True)
    path.write_bytes(junk + b"".join(lines[:3]) + junk + b"".join(lines[3:]) + junk)
    events = mirror.events()
    got = await take(events, len(expected))
    assert got == expected
    await mirror.close()
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(events.__anext__(), 2.0)


async def test_mirror_is_read_only(rec: Recorded) -> None:
    path, _data, expected, mirror = _setup(rec)
    before = path.stat()
    events = mirror.events()
    await take(events, len(expected))
    await mirror.close()
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert any(isinstance(e, TextComplete) for e in expected)
    assert any(isinstance(e, TurnCompleted) for e in expected)


def test_tail_refuses_a_nonsense_interval(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="interval"):
        JsonlTail(lambda: None, lambda: None, interval=0)  # type: ignore[arg-type,return-value]
