"""Bounded subprocess runs for detection: every wait has a timeout, the whole group is killed."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping, Sequence

import msgspec

OUTPUT_TAIL = 2000
"""Characters of output kept in a result (the tail, where errors are)."""


class RunOutcome(msgspec.Struct, frozen=True, kw_only=True):
    exit_code: int | None
    """``None`` when the process was still running at the deadline (and was then killed)."""
    output: str
    timed_out: bool
    error: str | None = None
    """Why the process could not be started at all."""


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The inherited environment minus variables that make a nested agent refuse to start."""
    env = {k: v for k, v in os.environ.items() if k != "CLAUDECODE"}
    env.update(extra or {})
    return env


async def _spawn(
    argv: Sequence[str], *, cwd: str | None, stdin_pipe: bool
) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE if stdin_pipe else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        cwd=cwd,
        env=clean_env(),
        start_new_session=os.name != "nt",
    )


async def terminate(proc: asyncio.subprocess.Process, grace: float = 3.0) -> None:
    """SIGTERM the process group, wait ``grace`` seconds, then SIGKILL it."""
    if proc.returncode is not None:
        return
    _signal_group(proc, signal.SIGTERM)
    try:
        await asyncio.wait_for(proc.wait(), grace)
    except TimeoutError:
        _signal_group(proc, signal.SIGKILL)
        await proc.wait()


def _signal_group(proc: asyncio.subprocess.Process, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.name == "nt":
            proc.kill()
        else:
            os.killpg(proc.pid, sig)


async def run_bounded(argv: Sequence[str], *, timeout: float, cwd: str | None = None) -> RunOutcome:
    """Run ``argv`` to completion within ``timeout`` seconds, capturing stdout+stderr."""
    try:
        proc = await _spawn(argv, cwd=cwd, stdin_pipe=False)
    except OSError as exc:
        return RunOutcome(exit_code=None, output="", timed_out=False, error=str(exc))
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        await terminate(proc, grace=1.0)
        return RunOutcome(exit_code=None, output="", timed_out=True)
    return RunOutcome(
        exit_code=proc.returncode,
        output=out.decode(errors="replace")[-OUTPUT_TAIL:],
        timed_out=False,
    )


async def run_stays_up(argv: Sequence[str], *, settle: float, cwd: str | None = None) -> RunOutcome:
    """Start ``argv`` with a stdin pipe; report whether it is still running after ``settle`` s.

    A process still alive at the deadline gives ``exit_code=None, timed_out=True`` (the good case
    for a persistent agent); it is then terminated. One that exited early gives its exit code and
    the tail of its output.
    """
    try:
        proc = await _spawn(argv, cwd=cwd, stdin_pipe=True)
    except OSError as exc:
        return RunOutcome(exit_code=None, output="", timed_out=False, error=str(exc))
    assert proc.stdout is not None
    reader = asyncio.ensure_future(proc.stdout.read())
    try:
        await asyncio.wait_for(proc.wait(), settle)
    except TimeoutError:
        if proc.stdin is not None:
            proc.stdin.close()
        await terminate(proc)
        output = await _drain(reader)
        return RunOutcome(exit_code=None, output=output, timed_out=True)
    output = await _drain(reader)
    return RunOutcome(exit_code=proc.returncode, output=output, timed_out=False)


async def _drain(reader: asyncio.Future[bytes]) -> str:
    try:
        data = await asyncio.wait_for(reader, 2.0)
    except TimeoutError:
        reader.cancel()
        return ""
    return data.decode(errors="replace")[-OUTPUT_TAIL:]
