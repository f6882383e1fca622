"""A terminal that is not the test's child: runs a CLI on a pseudo-terminal from a detached host.

The hand-off rule counts a vendor CLI as "a terminal" only when corral did not start it (this
process's descendants are corral's own). So a test's terminal must not descend from the test:
:class:`DetachedPty` starts this file through ``sh -c '… &'`` (the host is re-parented away from
the test), and the host runs the CLI on a PTY. The test talks to it through a directory: it
appends keystrokes to ``input``; the host appends the screen to ``screen``, writes the CLI's pid
to ``pid`` and, when it exits, its wait status to ``status``. The host kills the CLI and ends when
``kill`` appears or when the test process (``--parent``) is gone, so nothing outlives the test.

Run as a script: ``python _pty_host.py CTRL_DIR PARENT_PID -- argv…`` (env and cwd inherited).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Mapping, Sequence
from pathlib import Path


def _host(ctrl: Path, parent: int, argv: list[str]) -> None:
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    with contextlib.suppress(OSError):  # a TUI wants a real size
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    (ctrl / "pid").write_text(str(pid))
    sent = 0
    with open(ctrl / "screen", "ab") as screen:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                (ctrl / "status").write_text(str(status))
                return
            if (ctrl / "kill").exists() or not _alive(parent):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
                time.sleep(0.2)
                continue
            with contextlib.suppress(OSError):
                ready, _, _ = select.select([fd], [], [], 0.1)
                if ready:
                    screen.write(os.read(fd, 65536))
                    screen.flush()
            data = (ctrl / "input").read_bytes() if (ctrl / "input").exists() else b""
            if len(data) > sent:
                with contextlib.suppress(OSError):
                    os.write(fd, data[sent:])
                sent = len(data)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class DetachedPty:
    """The test's side: an interactive CLI on a PTY whose process is not the test's descendant."""

    def __init__(
        self, argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, ctrl: Path
    ) -> None:
        ctrl.mkdir(parents=True)
        self.ctrl = ctrl
        line = [sys.executable, __file__, str(ctrl), str(os.getpid()), "--", *argv]
        quoted = " ".join(_quote(a) for a in line)
        subprocess.run(
            ["sh", "-c", f"{quoted} >/dev/null 2>&1 </dev/null &"],
            env=dict(env),
            cwd=cwd,
            check=True,
            timeout=10,
        )
        deadline = time.monotonic() + 20
        while not (ctrl / "pid").exists():
            if time.monotonic() > deadline:
                raise AssertionError("the PTY host did not start")
            time.sleep(0.05)
        self.pid = int((ctrl / "pid").read_text())

    def type(self, text: str) -> None:
        with open(self.ctrl / "input", "ab") as fh:
            fh.write(text.encode())

    def alive(self) -> bool:
        return not (self.ctrl / "status").exists()

    def wait_exit(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while self.alive():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)
        return True

    def kill(self) -> None:
        (self.ctrl / "kill").touch()
        self.wait_exit(10)

    def screen_tail(self, n: int = 2000) -> str:
        path = self.ctrl / "screen"
        data = path.read_bytes() if path.exists() else b""
        return data[-n:].decode(errors="replace")


def _quote(arg: str) -> str:
    return "'" + arg.replace("'", "'\\''") + "'"


if __name__ == "__main__":
    ctrl_dir, parent_pid, sep, *command = sys.argv[1:]
    assert sep == "--"
    _host(Path(ctrl_dir), int(parent_pid), command)
