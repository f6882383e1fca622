"""OpenCode's stop goes through the ladder (issue 11 §3): the HTTP abort first, then SIGINT to the
server's process group, then the group is killed — so a server that ignores the abort, or cannot
answer it, still ends its turn ``cancelled`` within the bound (fake server: ``fake_opencode.py``)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from corral.events import EndReason, SessionEnded, StopReason, TextDelta, TurnCompleted

from ._harness import gone, make, pids, run_turn

pytestmark = pytest.mark.timeout(60)


def aborts(pidfile: Path) -> int:
    path = Path(str(pidfile) + ".aborts")
    return len(path.read_text().split()) if path.exists() else 0


async def test_a_server_that_ignores_the_abort_is_signalled_and_the_turn_ends_cancelled(
    tmp_path: Path,
) -> None:
    adapter, pidfile = make("opencode-sse", "ignore-abort", tmp_path)
    events = []
    await adapter.start("fault")
    try:
        await adapter.send("go")
        stream = adapter.stream()
        async with asyncio.timeout(20):
            async for event in stream:
                events.append(event)
                if isinstance(event, TextDelta):
                    break
        started = time.monotonic()
        await asyncio.wait_for(adapter.interrupt(), 15)
        took = time.monotonic() - started
        async with asyncio.timeout(10):
            async for event in stream:
                events.append(event)
                if isinstance(event, SessionEnded):
                    break
    finally:
        await asyncio.wait_for(adapter.stop(), 20)
    assert aborts(pidfile) == 1  # the protocol's cancel went first, and was answered
    (turn,) = [e for e in events if isinstance(e, TurnCompleted)]
    assert turn.stop_reason is StopReason.CANCELLED
    # cancel 1 s (answered, ignored) + SIGINT, which ends a Python server; room for a loaded box
    assert took < 8
    ended = events[-1]
    assert isinstance(ended, SessionEnded) and ended.reason is EndReason.FAILED
    server, grandchild = pids(pidfile)[:2]
    assert await gone(server) and await gone(grandchild)


async def test_an_honoured_abort_ends_the_turn_and_the_session_goes_on(tmp_path: Path) -> None:
    adapter, pidfile = make("opencode-sse", "tool-sleep", tmp_path)
    out = await run_turn(adapter, cancel_after_first_event=True, then="again")
    assert aborts(pidfile) == 1
    assert [t.stop_reason for t in out.of_turns()] == [StopReason.CANCELLED, StopReason.END_TURN]
    assert out.ended is not None and out.ended.reason is EndReason.COMPLETED
    assert out.seconds < 15
    tool = pids(pidfile)[1]
    assert await gone(tool, within=3.0)  # the cancelled turn's tool was reaped
