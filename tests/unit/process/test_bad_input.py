"""The stream-json driver never hangs or crashes on bad bytes: each becomes an Error event, and the
session still ends with exactly one SessionEnded. The "CLI" is a script that misbehaves on purpose."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from corral.adapters.claude import ClaudeAdapter
from corral.errors import ProcessError
from corral.events import EndReason, ErrorEvent, Event, SessionEnded, StopReason, TurnCompleted

BAD_CLI = Path(__file__).with_name("_bad_cli.py")


class BadClaude(ClaudeAdapter):
    """ClaudeAdapter pointed at the misbehaving script instead of ``claude``."""

    def __init__(self, mode: str) -> None:
        super().__init__(binary=sys.executable, extra_args=(), base_env={"PATH": "/usr/bin:/bin"})
        self.mode = mode

    def build(self, request):  # type: ignore[no-untyped-def]
        launch = super().build(request)
        # python _bad_cli.py MODE, ignoring claude's own flags
        return type(launch)(
            argv=(sys.executable, str(BAD_CLI), self.mode), env=launch.env, cwd=None
        )


async def run(mode: str) -> list[Event]:
    adapter = BadClaude(mode)
    await adapter.start("t")
    await adapter.send("go")
    events: list[Event] = []
    async for event in adapter.stream():
        events.append(event)
        if isinstance(event, TurnCompleted):
            await adapter.stop()
    return events


def errors(events: list[Event]) -> list[ErrorEvent]:
    return [e for e in events if isinstance(e, ErrorEvent)]


def ended(events: list[Event]) -> SessionEnded:
    ends = [e for e in events if isinstance(e, SessionEnded)]
    assert len(ends) == 1
    assert events[-1] is ends[0]
    return ends[0]


@pytest.mark.timeout(60)
async def test_a_100_mb_line_is_reported_and_skipped() -> None:
    events = await run("huge")
    assert [e.code for e in errors(events)] == ["line_too_long"]
    assert "104857" in errors(events)[0].message  # the size is in the message
    turn = next(e for e in events if isinstance(e, TurnCompleted))
    assert turn.stop_reason is StopReason.END_TURN  # the line after it was still read
    assert ended(events).reason is EndReason.COMPLETED


async def test_truncated_json_is_an_error_event() -> None:
    events = await run("truncated")
    assert [e.code for e in errors(events)] == ["invalid_json"]
    assert ended(events).reason is EndReason.COMPLETED


async def test_binary_garbage_is_an_error_event() -> None:
    events = await run("garbage")
    assert [e.code for e in errors(events)] == ["binary_output"]
    assert ended(events).reason is EndReason.COMPLETED


async def test_early_eof_ends_the_turn_and_the_session_as_failed() -> None:
    events = await run("eof")
    assert [e.code for e in errors(events)] == ["early_eof"]
    turn = next(e for e in events if isinstance(e, TurnCompleted))
    assert turn.stop_reason is StopReason.ERROR
    end = ended(events)
    assert end.reason is EndReason.FAILED
    assert end.exit_code == 1
    assert end.stderr_tail is not None and "lost my mind" in end.stderr_tail


async def test_death_before_initialize_raises_a_clear_error() -> None:
    adapter = BadClaude("die-at-start")
    with pytest.raises(ProcessError) as info:
        await adapter.start("t")
    assert "boom: cannot start" in info.value.stderr
