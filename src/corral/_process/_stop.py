"""The one escalation ladder every driver uses to end a turn within a bound.

:func:`end_turn` climbs until the turn is over:

1. **cancel** — the protocol's own cancel (a control request, ``session/cancel``, ``turn/interrupt``,
   ``abort``…), then wait up to ``cancel_wait`` seconds for the turn to end;
2. **signal** — SIGINT to the agent's process group (a CLI's Ctrl-C path), wait ``signal_wait``;
3. **kill** — the whole process group and every descendant that left it: SIGTERM, a grace
   period, SIGKILL (the transport's ``kill``: :meth:`ProcessTransport.kill` for a real process).

"The turn is over" is the driver's predicate, or the agent process having exited. The driver
reports the end itself: after a cancel the agent's own turn end; after a signal or kill, the driver
sees the process exit and ends the turn ``cancelled`` (then restarts the agent where its protocol
can resume, or ends the session ``failed``). The ladder never raises: a cancel that fails or times
out is one more reason to climb.

A cancelled turn's tool processes are then reaped: descendants of the agent born after the turn
began (``TurnMark``) are killed, by identity, so a ``sleep 30`` under a sandbox that left the
process group does not outlive the turn. Long-lived helpers started with the session are older
than the turn and are left alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import os
import signal
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from ._lifecycle import ProcessId, descendants, kill_tree

CANCEL_WAIT = 5.0
"""Seconds the protocol's cancel gets to end the turn before corral signals the agent."""
SIGNAL_WAIT = 2.0
"""Seconds SIGINT gets before the process group is killed."""
KILL_GRACE = 2.0


class AgentProcess(Protocol):
    """An agent process, as every transport exposes it (:class:`~corral._process.LineTransport`,
    :class:`~corral._process.HttpTransport`) and as the ladder needs it. A ``signal_group(sig)``
    method, when present, is used for the SIGINT step."""

    @property
    def pid(self) -> int | None: ...

    @property
    def returncode(self) -> int | None: ...

    @property
    def stderr_tail(self) -> str:
        """The process's last output (bounded), secrets redacted."""
        ...

    async def kill(self, grace: float = 3.0) -> int | None:
        """End the process (group): polite signal, ``grace`` seconds, then the hard one."""
        ...


class StopStep(enum.StrEnum):
    """How far :func:`end_turn` had to climb."""

    IDLE = "idle"
    """No turn was running."""
    CANCEL = "cancel"
    """The protocol's cancel ended the turn."""
    SIGNAL = "signal"
    """SIGINT to the process group ended it (or the agent exited)."""
    KILL = "kill"
    """The process group was killed."""


def _clock_ticks() -> int:
    try:
        return int(os.sysconf("SC_CLK_TCK"))
    except (ValueError, OSError):
        return 100


def _uptime_ticks() -> int | None:
    try:
        with open("/proc/uptime", "rb") as fh:
            return int(float(fh.read().split()[0]) * _clock_ticks())
    except (OSError, ValueError, IndexError):
        return None


class TurnMark:
    """When the current turn began, in the clock ``/proc/<pid>/stat`` uses for start times."""

    __slots__ = ("ticks",)

    def __init__(self) -> None:
        self.ticks: int | None = None

    def mark(self) -> None:
        # One tick of slack: a tool started in the same tick as the prompt still counts.
        now = _uptime_ticks()
        self.ticks = None if now is None else now - 1


def turn_processes(transport: AgentProcess | None, mark: TurnMark) -> set[ProcessId]:
    """The agent's descendants born since ``mark`` (the current turn's tools)."""
    if transport is None or transport.pid is None or mark.ticks is None:
        return set()
    if transport.returncode is not None:
        return set()  # its children were re-parented: only an earlier snapshot knows them
    since = mark.ticks
    return {d for d in descendants(transport.pid) if d[1] >= since}


def reap_turn(
    transport: AgentProcess | None, mark: TurnMark, known: set[ProcessId] | None = None
) -> int:
    """Kill the turn's processes (those found now, and ``known`` ones seen earlier); how many."""
    return kill_tree(turn_processes(transport, mark) | (known or set()))


async def _until(done: Callable[[], bool], transport: AgentProcess | None, wait: float) -> bool:
    deadline = time.monotonic() + wait
    while True:
        if done() or (transport is not None and transport.returncode is not None):
            return True
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.05)


async def end_turn(
    *,
    transport: AgentProcess | None,
    cancel: Callable[[], Awaitable[object]] | None,
    turn_over: Callable[[], bool],
    before_escalate: Callable[[], None] | None = None,
    mark: TurnMark | None = None,
    cancel_wait: float = CANCEL_WAIT,
    signal_wait: float = SIGNAL_WAIT,
) -> StopStep:
    """Climb the ladder until ``turn_over()`` (or the process exited); see the module docstring.

    ``before_escalate`` runs once before the first signal, so the driver can get ready for the
    process to go (e.g. flag a restart). Bounded by ``cancel_wait + signal_wait`` plus the kill's
    grace periods.
    """
    if turn_over():
        return StopStep.IDLE
    # Snapshots of the turn's tools, taken while the agent still lives: once it is gone (SIGINT
    # may end it), its children are re-parented and no longer found under it.
    seen: set[ProcessId] = set()
    if mark is not None:
        seen |= turn_processes(transport, mark)
    step = StopStep.CANCEL
    if cancel is not None:
        started = time.monotonic()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(cancel(), cancel_wait)
        left = max(0.0, cancel_wait - (time.monotonic() - started))
        ended = await _until(turn_over, transport, left)
    else:
        ended = False
    if not ended and transport is not None and transport.returncode is None:
        if mark is not None:
            seen |= turn_processes(transport, mark)
        if before_escalate is not None:
            before_escalate()
        step = StopStep.SIGNAL
        signal_group = getattr(transport, "signal_group", None)  # a replay has no process
        if callable(signal_group):
            signal_group(signal.SIGINT)
        if not await _until(turn_over, transport, signal_wait):
            step = StopStep.KILL
            await transport.kill(KILL_GRACE)
        await _until(turn_over, transport, cancel_wait)
    if mark is not None and reap_turn(transport, mark, seen):
        # A tool's parent may have started a child between the scan and its own death.
        await asyncio.sleep(0.1)
        reap_turn(transport, mark)
    return step
