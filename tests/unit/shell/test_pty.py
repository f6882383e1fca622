"""The PTY transport on real programs: a terminal of its own, bounded reads, the stop ladder,
and no program outliving corral."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from corral._process._pty import PtyTransport
from corral.errors import ProcessError, SpawnError
from corral.protocols.shell_screen import ScreenParser, ScreenRules

FAKE_TUI = str(Path(__file__).with_name("_fake_tui.py"))


async def _screen_until(t: PtyTransport, p: ScreenParser, needle: str, bound: float = 10) -> None:
    deadline = time.monotonic() + bound
    while needle not in "\n".join(p.display()):
        assert time.monotonic() < deadline, f"{needle!r} never shown: {p.display()[:8]}"
        chunk = await t.read(0.1)
        assert chunk is not None, "the terminal closed"
        if chunk:
            p.feed(chunk)
            answer = p.replies()
            if answer:
                await t.write(answer)


async def test_a_terminal_of_its_own_with_a_real_size() -> None:
    p = ScreenParser(ScreenRules())
    async with PtyTransport([sys.executable, FAKE_TUI], columns=100, rows=30) as t:
        # The program's cursor-position query was answered by the screen (cpr=yes); its fd 0 is a
        # terminal of the given size and /dev/tty opens: the PTY is its controlling terminal.
        await _screen_until(t, p, "size 100x30 tty=yes cpr=yes")
        assert t.pid is not None and os.getpgid(t.pid) == t.pid  # its own process group
        assert os.getsid(t.pid) == t.pid  # and its own session
        await t.write(b"hello\r")
        await _screen_until(t, p, "typed: hello (lines=1)")


async def test_stop_ends_a_tui_with_ctrl_c_first() -> None:
    p = ScreenParser(ScreenRules())
    async with PtyTransport([sys.executable, FAKE_TUI]) as t:
        await _screen_until(t, p, "cpr=yes")
        code = await t.stop()
        assert code == 130  # the fake TUI's own exit on Ctrl-C twice: no signal was needed
        assert t.killed_by_us is False
        rest = [await t.read(0.5) for _ in range(5)]  # what it printed last, then the close
        assert rest[-1] is None and b"^C" in b"".join(c for c in rest if c)


async def test_stop_climbs_to_sigterm_when_ctrl_c_is_ignored() -> None:
    ignore = (
        "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); "
        "print('ignoring', flush=True); time.sleep(60)"
    )
    t = PtyTransport([sys.executable, "-c", ignore])
    await t.start()
    await _screen_until(t, ScreenParser(ScreenRules()), "ignoring")
    started = time.monotonic()
    code = await t.stop(ctrl_c_wait=0.5, grace=2.0)
    assert code == -15 and t.killed_by_us
    assert time.monotonic() - started < 5


async def test_reads_are_bounded_and_writes_after_exit_fail() -> None:
    t = PtyTransport([sys.executable, "-c", "import time; time.sleep(0.5)"])
    await t.start()
    started = time.monotonic()
    assert await t.read(0.2) == b""  # nothing printed: an empty chunk after the bound
    assert time.monotonic() - started < 1
    assert await t.wait(5) == 0
    while (await t.read(0.2)) is not None:
        pass
    with pytest.raises(ProcessError):
        await t.write(b"late\r")
    await t.kill()


async def test_a_missing_program_is_a_spawn_error() -> None:
    with pytest.raises(SpawnError):
        await PtyTransport(["/nonexistent/cli"]).start()


def test_the_program_dies_with_corral(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    host = textwrap.dedent(
        f"""
        import asyncio, os
        from corral._process._pty import PtyTransport
        async def main():
            t = PtyTransport(["sleep", "60"])
            await t.start()
            open({str(pid_file)!r}, "w").write(str(t.pid))
            await asyncio.sleep(60)
        asyncio.run(main())
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", host])
    try:
        deadline = time.monotonic() + 20
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline, "the host never started its terminal"
            time.sleep(0.05)
        child = int(pid_file.read_text())
        os.kill(child, 0)  # alive while corral lives
        proc.kill()  # SIGKILL: no atexit hook runs, only the parent-death signal is left
        proc.wait(5)
        deadline = time.monotonic() + 5
        while _alive(child):
            assert time.monotonic() < deadline, "the program outlived corral"
            time.sleep(0.05)
    finally:
        proc.kill()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in (b"Z", b"X")
