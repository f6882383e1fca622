"""Shared steps of the real-CLI hand-off tests (tests/realcli/test_handoff_*.py)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from _pty_host import DetachedPty

from corral.testing import FakeModelServer


async def until(check: Callable[[], bool], seconds: float, what: str, tty: Any = None) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not check():
        if loop.time() > deadline:
            screen = tty.screen_tail() if tty is not None else ""
            raise AssertionError(f"timed out waiting for {what}\n{screen}")
        await asyncio.sleep(0.2)


async def type_prompt(tty: DetachedPty, text: str) -> None:
    tty.type(text)
    await asyncio.sleep(1.0)
    tty.type("\r")


async def leave(tty: DetachedPty, command: str = "/exit") -> None:
    """Exit the TUI the way a person does; it can be slow to take the command under load."""
    for _ in range(3):
        tty.type(command)
        await asyncio.sleep(1.0)
        tty.type("\r")
        if await asyncio.to_thread(tty.wait_exit, 20):
            return
    raise AssertionError(f"the CLI did not exit:\n{tty.screen_tail()}")


def asked(server: FakeModelServer, text: str) -> list[int]:
    """Indices of the main requests whose last user message carries ``text``."""
    return [i for i, r in enumerate(server.requests.main()) if text in r.last_user_text]


def kill_leftovers(marker: str) -> list[int]:
    """Kill (by pid) what a vendor CLI left running from ``marker`` (the test's home): Codex's
    TUI leaves its app-server daemon behind. Returns the pids."""
    import os
    import signal

    from corral._process._scan import _pids, _read_argv

    killed = []
    for pid in _pids():
        argv = _read_argv(pid)
        if argv and argv[0].startswith(marker):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            killed.append(pid)
    return killed


async def submit(
    tty: DetachedPty, text: str, sent: Callable[[], bool], seconds: float = 120
) -> None:
    """Type ``text`` and Enter until ``sent()``: a TUI still initialising takes Enter as a newline
    of the input box (Qwen Code), so Enter is repeated while nothing was sent (an empty box
    sends nothing, so nothing is sent twice)."""
    await type_prompt(tty, text)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not sent():
        if loop.time() > deadline:
            raise AssertionError(f"{text!r} was never sent\n{tty.screen_tail()}")
        await asyncio.sleep(0.5)
        if int(deadline - loop.time()) % 15 == 0:
            tty.type("\r")
            await asyncio.sleep(1)
