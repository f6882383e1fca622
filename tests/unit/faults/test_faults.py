"""The fault suite: every protocol family's driver against a fake agent that misbehaves.

For each fault the event sequence and the end reason are asserted, in bounded time (the pytest
timeout, and the measured seconds) and bounded memory (growth of this process's peak RSS).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from corral.events import EndReason, Error, StopReason, TextComplete, TextDelta, TurnCompleted

from ._harness import FAMILIES, alive, gone, make, pids, run_turn

ROOT = Path(__file__).parents[3]

pytestmark = pytest.mark.timeout(90)
all_families = pytest.mark.parametrize("family", FAMILIES)

RSS_BOUND_MB = 150


def isolated(family: str, mode: str, tmp_path: Path) -> dict[str, Any]:
    """The case's outcome from a fresh interpreter (``_isolated.py`` says why)."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.unit.faults._isolated", family, mode, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=80,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert "escaped" not in result, result["escaped"]
    return result


def texts(outcome) -> str:  # type: ignore[no-untyped-def]
    return "".join(e.text for e in outcome.events if isinstance(e, TextDelta | TextComplete))


@all_families
async def test_ok_turn_ends_normally(family: str, tmp_path: Path) -> None:
    adapter, _ = make(family, "ok", tmp_path)
    out = await run_turn(adapter)
    assert out.turn.stop_reason is StopReason.END_TURN
    assert "first words" in texts(out) or "first" in texts(out)
    assert out.ended is not None and out.ended.reason is not EndReason.FAILED


@all_families
async def test_crash_mid_turn_ends_turn_and_session_failed(family: str, tmp_path: Path) -> None:
    adapter, pidfile = make(family, "crash", tmp_path)
    out = await run_turn(adapter, until_end=True)
    assert out.turn.stop_reason is StopReason.ERROR
    assert out.ended is not None and out.ended.reason is EndReason.FAILED
    assert out.ended.exit_code == 3
    assert "crashed mid-turn" in (out.ended.stderr_tail or "") or any(
        "crashed" in (e.message or "") for e in out.of(Error)
    )
    assert out.seconds < 15
    assert all(not alive(pid) for pid in pids(pidfile))


RESUMES = ("stream-json", "acp")
"""Drivers whose protocol lets corral resume the session in a new process after a kill."""


@pytest.mark.parametrize("mode", ["hang", "ignore-term"])
@all_families
async def test_hung_agent_is_stopped_by_the_watchdog(
    family: str, mode: str, tmp_path: Path
) -> None:
    adapter, pidfile = make(family, mode, tmp_path)
    resumes = family in RESUMES
    out = await run_turn(adapter, idle_timeout=1.0, then="again" if resumes else None)
    assert out.fired == 1
    assert [e.code for e in out.of(Error)][:1] == ["agent_unresponsive"]
    turns = out.of(TurnCompleted)
    assert turns[0].stop_reason is StopReason.CANCELLED
    # watchdog 1 s + cancel 1 s + SIGINT 2 s + kill grace 2 s, with room for a loaded machine
    assert out.seconds < 20
    agent, grandchild = pids(pidfile)[:2]
    assert await gone(agent) and await gone(grandchild)  # the whole process group went
    if resumes:  # the session stayed usable: a new process answered the next prompt
        assert [t.stop_reason for t in turns] == [StopReason.CANCELLED, StopReason.END_TURN]
        assert pids(pidfile)[-1] not in (agent, grandchild)
    else:  # no resume in this protocol: the session ended failed, not stuck busy
        assert out.ended is not None and out.ended.reason is EndReason.FAILED


@all_families
async def test_stderr_flood_is_survived(family: str, tmp_path: Path) -> None:
    adapter, _ = make(family, "stderr-flood", tmp_path)
    out = await run_turn(adapter)
    assert out.turn.stop_reason is StopReason.END_TURN
    assert out.rss_growth_mb < RSS_BOUND_MB


@all_families
async def test_a_100_mb_line_is_dropped_and_reported(family: str, tmp_path: Path) -> None:
    adapter, _ = make(family, "huge", tmp_path)
    out = await run_turn(adapter)
    assert out.turn.stop_reason is StopReason.END_TURN
    # an Error (or, for codex, an UnknownEvent) that says how big the dropped line was
    reported = [e for e in out.events if "104857" in repr(e) and type(e).__name__ != "TextDelta"]
    assert reported, out.events
    assert out.rss_growth_mb < RSS_BOUND_MB


@all_families
async def test_a_partial_last_line_ends_the_turn(family: str, tmp_path: Path) -> None:
    adapter, _ = make(family, "partial", tmp_path)
    out = await run_turn(adapter, until_end=True)
    assert out.turn.stop_reason is StopReason.ERROR
    assert out.ended is not None
    assert out.seconds < 15


@all_families
def test_2000_deep_json_does_not_break_the_session(family: str, tmp_path: Path) -> None:
    out = isolated(family, "deep", tmp_path)
    assert out["turns"] == ["end_turn"]
    assert out["ended"] not in (None, "failed")


@all_families
def test_malformed_lines_become_events_and_the_turn_goes_on(family: str, tmp_path: Path) -> None:
    out = isolated(family, "malformed", tmp_path)
    assert out["turns"] == ["end_turn"]
    assert out["ended"] not in (None, "failed")
    assert set(out["kinds"]) & {"ErrorEvent", "UnknownEvent"}, out


@all_families
async def test_cancel_reaps_a_tool_that_left_the_process_group(family: str, tmp_path: Path) -> None:
    adapter, pidfile = make(family, "tool-sleep", tmp_path)
    out = await run_turn(adapter, cancel_after_first_event=True)
    assert out.turn.stop_reason is StopReason.CANCELLED
    tool = pids(pidfile)[1]
    assert await gone(tool, within=3.0), "the cancelled turn's sleep is still running"
