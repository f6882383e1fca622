"""Builds each driver on its fake agent and runs one turn through the watchdog, as corral does."""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from corral._process import identity, is_alive
from corral.adapters._acp import AcpAdapter
from corral.adapters._turns import TurnWatchdog
from corral.adapters.base import BaseAdapter
from corral.adapters.claude import ClaudeAdapter
from corral.adapters.codex import CodexAdapter
from corral.adapters.opencode import OpenCodeAdapter
from corral.adapters.pi import PiAdapter
from corral.events import Event, SessionEnded, TextComplete, TextDelta, TurnCompleted

HERE = Path(__file__).parent
FAMILIES = ("stream-json", "acp", "codex-app-server", "pi-rpc", "opencode-sse")
FAST_CANCEL = 1.0


class FaultClaude(ClaudeAdapter):
    cancel_wait: ClassVar[float] = FAST_CANCEL

    def build(self, request):  # type: ignore[no-untyped-def]
        launch = super().build(request)
        return type(launch)(
            argv=(sys.executable, str(HERE / "fake_stream_json.py")), env=launch.env, cwd=None
        )


class FaultAcp(AcpAdapter):
    agent_id = "fault-acp"
    display_name = "fault ACP agent"
    cli_binary = sys.executable
    acp_args = (str(HERE / "fake_acp.py"),)
    provides_models = False
    provides_usage = False
    cap_interrupt = True
    cap_resume = True
    cancel_wait: ClassVar[float] = FAST_CANCEL


class FaultCodex(CodexAdapter):
    cancel_wait: ClassVar[float] = FAST_CANCEL


class FaultPi(PiAdapter):
    cancel_wait: ClassVar[float] = FAST_CANCEL


class FaultOpenCode(OpenCodeAdapter):
    cancel_wait: ClassVar[float] = FAST_CANCEL


def wrapper(tmp_path: Path, script: str) -> str:
    path = tmp_path / f"run-{script}.sh"
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{HERE / script}" "$@"\n')
    path.chmod(0o755)
    return str(path)


def make(family: str, mode: str, tmp_path: Path) -> tuple[BaseAdapter, Path]:
    pidfile = tmp_path / "pids"
    env = {"FAULT_MODE": mode, "FAULT_PIDFILE": str(pidfile), "FAULT_MARKER": f"m-{tmp_path.name}"}
    adapter: BaseAdapter
    if family == "stream-json":
        adapter = FaultClaude(env=env, base_env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    elif family == "acp":
        adapter = FaultAcp(cwd=str(tmp_path), env=env)
    elif family == "codex-app-server":
        adapter = FaultCodex(cwd=str(tmp_path), binary=wrapper(tmp_path, "fake_codex.py"), env=env)
    elif family == "pi-rpc":
        adapter = FaultPi(cwd=str(tmp_path), binary=wrapper(tmp_path, "fake_pi.py"), env=env)
    elif family == "opencode-sse":
        adapter = FaultOpenCode(
            cwd=str(tmp_path),
            binary=wrapper(tmp_path, "fake_opencode.py"),
            env=env,
            attach_root=tmp_path / "attach",
            ready_deadline=20.0,
        )
    else:
        raise ValueError(family)
    return adapter, pidfile


def pids(pidfile: Path) -> list[int]:
    if not pidfile.exists():
        return []
    return [int(x) for x in pidfile.read_text().split()]


@dataclass
class Outcome:
    events: list[Event] = field(default_factory=list)
    seconds: float = 0.0
    rss_growth_mb: float = 0.0
    fired: int = 0

    def of(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    def of_turns(self) -> list[TurnCompleted]:
        return self.of(TurnCompleted)

    @property
    def turn(self) -> TurnCompleted:
        turns = self.of(TurnCompleted)
        assert len(turns) == 1, f"expected one turn end, got {self.events!r}"
        return turns[0]

    @property
    def ended(self) -> SessionEnded | None:
        ends = self.of(SessionEnded)
        assert len(ends) <= 1
        return ends[0] if ends else None


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def run_turn(
    adapter: BaseAdapter,
    *,
    idle_timeout: float | None = None,
    cancel_after_first_event: bool = False,
    until_end: bool = False,
    then: str | None = None,
    limit: float = 40.0,
) -> Outcome:
    """Start, send one prompt, collect events until the turn ends (with ``then``: send that
    prompt too and collect its turn), then stop the adapter."""
    out = Outcome()
    rss = _rss_mb()
    started = time.monotonic()
    watchdog = TurnWatchdog(adapter, idle_timeout, out.events.append)
    await adapter.start("fault")
    await adapter.send("go")
    watchdog.turn_started()
    watching = asyncio.create_task(watchdog.run())
    cancelling: asyncio.Task[None] | None = None

    async def consume() -> None:
        nonlocal cancelling
        while True:
            async for event in adapter.stream():
                watchdog.saw(event)
                out.events.append(event)
                if cancel_after_first_event and cancelling is None and _is_text(event):
                    cancelling = asyncio.create_task(adapter.interrupt())
                if isinstance(event, SessionEnded):
                    return
                if isinstance(event, TurnCompleted) and not until_end:
                    return

    async def second() -> None:
        assert then is not None
        await adapter.send(then)
        async for event in _events(adapter):
            out.events.append(event)
            if isinstance(event, TurnCompleted | SessionEnded):
                return

    try:
        await asyncio.wait_for(consume(), limit)
        if then is not None and not out.of(SessionEnded):
            if cancelling is not None:
                await asyncio.wait_for(cancelling, limit)
            await asyncio.wait_for(second(), limit)
    finally:
        watching.cancel()
        if cancelling is not None:
            await asyncio.wait_for(cancelling, limit)
        out.seconds = time.monotonic() - started
        out.fired = watchdog.fired
        await asyncio.wait_for(adapter.stop(), 20)

        # whatever stop() emitted (the session end) is part of the record
        async def rest() -> None:
            async for event in adapter.stream():
                out.events.append(event)
                if isinstance(event, SessionEnded):
                    return

        if not out.of(SessionEnded):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(rest(), 5)
    out.rss_growth_mb = _rss_mb() - rss
    return out


async def _events(adapter: BaseAdapter):  # type: ignore[no-untyped-def]
    while True:
        async for event in adapter.stream():
            yield event
            if isinstance(event, SessionEnded):
                return


def _is_text(event: Event) -> bool:
    return isinstance(event, TextDelta | TextComplete)


def alive(pid: int) -> bool:
    ident = identity(pid)
    return ident is not None and is_alive(ident)


async def gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        await asyncio.sleep(0.05)
    return not alive(pid)
