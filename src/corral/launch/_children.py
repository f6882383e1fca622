"""Child processes that die with corral: the parent-death signal and group termination."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1
TERM_GRACE = 5.0


def death_signal_preexec(
    sig: int = signal.SIGTERM, controlling_tty: int | None = None
) -> Callable[[], None]:
    """A ``preexec_fn``: on Linux, ask for ``sig`` when the parent dies, then close the race where
    the parent died before the request (its pid changed). ``controlling_tty``: make that fd the
    controlling terminal of the new session (for a PTY child).

    Everything is looked up here, in the parent: the child between fork and exec only calls
    functions it already holds (no import, no ``dlopen``), since other threads of corral (the
    proxy's stderr reader) may hold locks at the fork."""
    parent = os.getpid()
    prctl: Callable[..., int] | None = None
    if sys.platform.startswith("linux"):
        try:
            prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            prctl = None
    set_ctty: Callable[[], object] | None = None
    if controlling_tty is not None:
        import fcntl
        import termios

        ioctl, request, fd = fcntl.ioctl, termios.TIOCSCTTY, controlling_tty
        set_ctty = lambda: ioctl(fd, request, 0)  # noqa: E731
    getppid, exit_now = os.getppid, os._exit

    def preexec() -> None:
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
            if getppid() != parent:
                exit_now(1)
        if set_ctty is not None:
            set_ctty()

    return preexec


def signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    """``sig`` to the child's process group (its own: started with ``start_new_session``)."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def terminate(proc: subprocess.Popen[bytes], grace: float = TERM_GRACE) -> int | None:
    """SIGTERM to the group, up to ``grace`` seconds, then SIGKILL; reaps the child."""
    if proc.poll() is None:
        signal_group(proc, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        if proc.poll() is None:
            signal_group(proc, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(grace)
    else:
        # the leader is gone; stragglers of its group are not
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    return proc.returncode


def exit_status(returncode: int) -> int:
    """A shell's view of a child's status: its code, or 128 + the signal that killed it."""
    return 128 - returncode if returncode < 0 else returncode
