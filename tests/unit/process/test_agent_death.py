"""Agents die with corral: the stop ladder, process trees, parent death, and ``corral run`` on
SIGTERM / SIGHUP. Every check is by pid (and start time, so a reused pid cannot pass for one)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from corral._process import (
    ProcessTransport,
    StopStep,
    TurnMark,
    descendants,
    end_turn,
    identity,
    is_alive,
    reap_turn,
    start_time,
)
from corral._process._lifecycle import parent_death_supported

FAULTS = Path(__file__).parents[1] / "faults"
pytestmark = pytest.mark.timeout(60)


def alive(pid: int) -> bool:
    ident = identity(pid)
    return ident is not None and is_alive(ident)


async def gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        await asyncio.sleep(0.05)
    return False


def listed(path: Path) -> list[int]:
    return [int(x) for x in path.read_text().split()] if path.exists() else []


async def wait_pids(path: Path, count: int, within: float = 15.0) -> list[int]:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        found = listed(path)
        if len(found) >= count:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"{path} never listed {count} pids")


def test_start_time_names_one_process() -> None:
    me = identity(os.getpid())
    assert me is not None and is_alive(me)
    assert not is_alive((os.getpid(), me[1] + 1))  # same pid, another start: not this process
    assert start_time(2**22 + 12345) is None


async def test_kill_reaches_a_descendant_that_left_the_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    code = f"""
        import subprocess, time
        p = subprocess.Popen(["sleep", "30"], start_new_session=True)
        open({str(pidfile)!r}, "w").write(str(p.pid))
        time.sleep(30)
    """
    t = ProcessTransport([sys.executable, "-c", textwrap.dedent(code)])
    await t.start()
    (stray,) = await wait_pids(pidfile, 1)
    assert os.getpgid(stray) != t.pid  # really outside the agent's group
    await t.kill(grace=1)
    assert await gone(stray)


async def test_the_ladder_climbs_to_kill_for_an_agent_that_ignores_everything() -> None:
    code = """
        import signal, sys, time
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("ready", flush=True)
        time.sleep(60)
    """
    t = ProcessTransport([sys.executable, "-c", textwrap.dedent(code)])
    await t.start()
    lines = t.lines()
    assert await anext(lines) == b"ready"
    cancelled = []

    async def cancel() -> None:
        cancelled.append(True)
        await asyncio.sleep(30)  # a protocol cancel that never answers

    started = time.monotonic()
    step = await end_turn(
        transport=t, cancel=cancel, turn_over=lambda: False, cancel_wait=0.5, signal_wait=0.5
    )
    assert step is StopStep.KILL
    assert cancelled == [True]
    assert t.returncode == -signal.SIGKILL
    assert time.monotonic() - started < 10


async def test_the_ladder_stops_at_cancel_when_the_protocol_works() -> None:
    t = ProcessTransport([sys.executable, "-c", "import time; time.sleep(30)"])
    await t.start()
    over = []
    step = await end_turn(
        transport=t,
        cancel=lambda: asyncio.sleep(0, over.append(True)),  # type: ignore[func-returns-value]
        turn_over=lambda: bool(over),
    )
    assert step is StopStep.CANCEL
    assert t.returncode is None  # the agent lives on
    await t.kill(grace=1)


async def test_reap_turn_kills_only_what_the_turn_started(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    code = f"""
        import subprocess, sys, time
        old = subprocess.Popen(["sleep", "30"])
        open({str(pidfile)!r}, "a").write(f"{{old.pid}}\\n")
        sys.stdin.readline()
        new = subprocess.Popen(["sleep", "30"], start_new_session=True)
        open({str(pidfile)!r}, "a").write(f"{{new.pid}}\\n")
        time.sleep(30)
    """
    t = ProcessTransport([sys.executable, "-c", textwrap.dedent(code)])
    await t.start()
    (old,) = await wait_pids(pidfile, 1)
    await asyncio.sleep(0.05)  # start times are in clock ticks: the turn begins strictly later
    mark = TurnMark()
    await asyncio.sleep(0.05)
    mark.mark()
    await t.write_line(b"go")
    _, new = await wait_pids(pidfile, 2)
    assert {p for p, _ in descendants(t.pid or 0)} >= {old, new}
    assert reap_turn(t, mark) >= 1
    assert await gone(new)
    assert alive(old)  # older than the turn: a session helper, left alone
    await t.kill(grace=1)
    assert await gone(old)


@pytest.mark.skipif(not parent_death_supported(), reason="PR_SET_PDEATHSIG is Linux only")
async def test_an_agent_dies_when_its_corral_is_sigkilled(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    code = f"""
        import asyncio, sys, time
        from corral._process import ProcessTransport
        async def main():
            t = ProcessTransport(["sleep", "30"])
            await t.start()
            open({str(pidfile)!r}, "w").write(str(t.pid))
            await asyncio.sleep(30)
        asyncio.run(main())
    """
    corral = spawn([sys.executable, "-c", textwrap.dedent(code)])
    try:
        (agent,) = await wait_pids(pidfile, 1)
        assert alive(agent)
        corral.kill()  # no handler, no atexit: only the kernel can clean up now
        corral.wait(10)
        assert await gone(agent), "the agent outlived its corral"
    finally:
        corral.kill()
        corral.wait(10)


def spawn(argv: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(argv)


def _corral_run(tmp_path: Path, mode: str) -> tuple[subprocess.Popen[bytes], Path]:
    wrapper = tmp_path / "claude"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAULTS / "fake_stream_json.py"}"\n')
    wrapper.chmod(0o755)
    pidfile = tmp_path / "pids"
    env = {
        **os.environ,
        "FAULT_MODE": mode,
        "FAULT_PIDFILE": str(pidfile),
        "CORRAL_HOME": str(tmp_path / "home"),
    }
    argv = [sys.executable, "-m", "corral", "run", "claude-code", "go", "--binary", str(wrapper)]
    with open(tmp_path / "stderr", "wb") as err:
        proc = subprocess.Popen(
            [*argv, "--json"], env=env, stdout=subprocess.DEVNULL, stderr=err, cwd=tmp_path
        )
    return proc, pidfile


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
async def test_a_terminated_corral_run_leaves_no_agent_process(
    tmp_path: Path, sig: signal.Signals
) -> None:
    proc, pidfile = _corral_run(tmp_path, "ignore-term")
    try:
        agent, grandchild = await wait_pids(pidfile, 2)
        proc.send_signal(sig)
        code = await asyncio.to_thread(proc.wait, 30)
        assert code == 128 + sig, (tmp_path / "stderr").read_text()[-2000:]
        assert await gone(agent), "corral run exited and left its agent running"
        assert await gone(grandchild), "the agent's process group outlived corral run"
    finally:
        proc.kill()
        proc.wait(10)


async def test_corral_run_stops_a_silent_agent_with_idle_timeout(tmp_path: Path) -> None:
    wrapper = tmp_path / "claude"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAULTS / "fake_stream_json.py"}"\n')
    wrapper.chmod(0o755)
    env = {**os.environ, "FAULT_MODE": "ignore-term", "FAULT_PIDFILE": str(tmp_path / "pids")}
    argv = [sys.executable, "-m", "corral", "run", "claude-code", "go", "--binary", str(wrapper)]
    started = time.monotonic()
    done = await asyncio.to_thread(
        subprocess.run,
        [*argv, "--json", "--idle-timeout", "1"],
        env=env,
        capture_output=True,
        cwd=tmp_path,
        timeout=50,
    )
    assert done.returncode == 1
    assert b'"agent_unresponsive"' in done.stdout
    assert time.monotonic() - started < 45
    for pid in listed(tmp_path / "pids"):
        assert await gone(pid)
