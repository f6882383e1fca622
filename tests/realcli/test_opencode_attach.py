"""``corral attach``: OpenCode's own TUI, under a pseudo-terminal, joins the server and session a
corral driver is running — it renders the session's history, and a prompt typed into it is a turn
the driver observes (a person can watch or take over while corral keeps the event stream)."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from corral.adapters.opencode import OpenCodeAdapter
from corral.events import TextComplete, TurnCompleted
from corral.redirect import redirect_for
from corral.testing import FakeModelServer

HELLO = "Hello from the scripted model."
_ANSI = re.compile(
    rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>]"
)


class Pty:
    """A child on a pseudo-terminal; ``screen`` is everything it printed, escapes stripped."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd, start_new_session=True
        )
        os.close(slave)
        self.raw = b""

    @property
    def screen(self) -> str:
        return _ANSI.sub(b"", self.raw).decode("utf-8", "replace")

    def _pump(self, timeout: float) -> None:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if ready:
            with contextlib.suppress(OSError):
                self.raw += os.read(self.master, 65536)

    async def wait_for(self, text: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        loop = asyncio.get_running_loop()
        while text not in self.screen:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                pytest.fail(f"the TUI never showed {text!r}; screen tail:\n{self.screen[-2000:]}")
            await loop.run_in_executor(None, self._pump, 0.3)

    async def type(self, text: str) -> None:
        for ch in text.encode():
            os.write(self.master, bytes([ch]))
            await asyncio.sleep(0.02)  # a person's typing; the TUI drops a burst pasted at once

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        os.close(self.master)


@pytest.mark.realcli("opencode")
@pytest.mark.timeout(240)
async def test_corral_attach_opens_the_tui_on_the_driven_session(
    agent_bin: Callable[[str], Path],
    clean_env: dict[str, str],
    git_repo: Path,
    isolated_home: Path,
    tmp_path: Path,
) -> None:
    binary = agent_bin("opencode")
    corral_home = tmp_path / "corral"
    async with FakeModelServer({"default": {"text": HELLO, "chunks": 3}}) as model:
        red = redirect_for(
            "opencode",
            base_url=model.base_url,
            model="fake-model",
            api_key="test",
            home=isolated_home,
        )
        red.apply()
        adapter = OpenCodeAdapter(
            cwd=str(git_repo),
            model="fake-model",
            binary=str(binary),
            env=dict(red.env),
            base_env=clean_env,
            attach_root=corral_home,
        )
        await adapter.start("attach-test")
        events = adapter.stream()
        tui: Pty | None = None
        try:
            await adapter.send("Say hello.")
            async for event in events:
                if isinstance(event, TurnCompleted):
                    break
            env = {
                **clean_env,
                **red.env,
                "CORRAL_HOME": str(corral_home),
                "TERM": "xterm-256color",
            }
            tui = Pty([sys.executable, "-m", "corral", "attach", "attach-test"], env, git_repo)
            # The TUI fetched the session from our server: its history is on screen.
            await tui.wait_for(HELLO, 90)
            await tui.wait_for("Say hello.", 5)
            await tui.type("typed in the tui")
            await tui.type("\r")
            seen = []
            async with asyncio.timeout(90):
                async for event in events:
                    seen.append(event)
                    if isinstance(event, TurnCompleted):
                        break
            assert isinstance(seen[-1], TurnCompleted), seen
            assert any(isinstance(e, TextComplete) and e.text == HELLO for e in seen)
            assert "typed in the tui" in model.requests.main().last().last_user_text
        finally:
            if tui is not None:
                tui.close()
            await adapter.stop()
    assert not list((corral_home / "attach").glob("*.json")), (
        "the attach record outlived the session"
    )
