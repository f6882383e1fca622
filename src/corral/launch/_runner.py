"""Step 7–8 at run time: spawn the harness, pass the terminal through, forward signals, and
return the harness's exit status.

Non-interactive: the harness inherits corral's stdin/stdout/stderr (or stdout is teed into an
observer with ``--observe``). Interactive: when the harness needs a terminal it gets a PTY of its
own; corral's terminal is put in raw mode and bytes are copied both ways, and window-size changes
(SIGWINCH) are copied onto the PTY, which makes the kernel signal the harness. Either way the
harness runs in a process group of its own with a parent-death signal; SIGINT, SIGTERM and SIGHUP
sent to corral are forwarded to that group, and a harness that outlives a forwarded signal by
``ESCALATE_AFTER`` seconds is terminated (TERM, 5 s, KILL).
"""

from __future__ import annotations

import contextlib
import errno
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import FrameType

from ._children import death_signal_preexec, exit_status, signal_group, terminate
from ._env import HarnessLaunch
from ._errors import LaunchError

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
ESCALATE_AFTER = 10.0

Observer = Callable[[bytes], None]


class _Signals:
    """Forward FORWARDED to the child's group; remember the first one received."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.first: int | None = None
        self.at: float | None = None
        self._previous: dict[int, object] = {}

    def __enter__(self) -> _Signals:
        for sig in FORWARDED:
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, sig: int, frame: FrameType | None) -> None:
        if self.first is None:
            self.first, self.at = sig, time.monotonic()
        if self.proc is not None:
            signal_group(self.proc, sig)

    def overdue(self) -> bool:
        return self.at is not None and time.monotonic() - self.at > ESCALATE_AFTER

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]


def run_harness(
    launch: HarnessLaunch,
    base_env: Mapping[str, str],
    *,
    use_pty: bool,
    cwd: Path | None = None,
    observer: Observer | None = None,
) -> int:
    """Run the harness to its end; its exit status (128 + signal when a signal killed it; 130
    when corral was interrupted by SIGINT and the harness exited 0 or by a signal)."""
    env = {k: v for k, v in base_env.items() if k not in launch.unset} | launch.env
    argv = [launch.command, *launch.args]
    with _Signals() as signals:
        try:
            if use_pty:
                rc = _run_pty(argv, env, cwd, signals)
            else:
                rc = _run_pipes(argv, env, cwd, signals, observer)
        except OSError as exc:
            raise LaunchError(
                "HARNESS_LAUNCH_FAILED", harness=launch.command, error=str(exc)
            ) from exc
    status = exit_status(rc)
    if signals.first == signal.SIGINT and (status == 0 or status > 128):
        return 130
    return status


def _spawn(
    argv: list[str],
    env: Mapping[str, str],
    cwd: Path | None,
    signals: _Signals,
    **kwargs: object,
) -> subprocess.Popen[bytes]:
    tty = kwargs.pop("controlling_tty", None)
    proc = subprocess.Popen(  # type: ignore[call-overload]
        argv,
        env=dict(env),
        cwd=cwd,
        start_new_session=True,
        preexec_fn=death_signal_preexec(controlling_tty=tty),  # type: ignore[arg-type]
        **kwargs,
    )
    signals.proc = proc
    if signals.first is not None:  # a signal arrived while spawning
        signal_group(proc, signals.first)
    return proc  # type: ignore[no-any-return]


def _wait(proc: subprocess.Popen[bytes], signals: _Signals, poll: Callable[[float], object]) -> int:
    while True:
        rc = proc.poll()
        if rc is not None:
            return rc
        if signals.overdue():
            terminate(proc)
            continue
        poll(0.1)


@contextlib.contextmanager
def _exit_waiter(proc: subprocess.Popen[bytes]) -> Iterator[Callable[[float], object]]:
    """A sleep that ends early when ``proc`` exits (Linux pidfd), so its exit is seen at once
    rather than at the next poll; plain ``time.sleep`` where there is no pidfd."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        yield time.sleep
        return
    sel = selectors.DefaultSelector()
    sel.register(fd, selectors.EVENT_READ)
    try:
        yield sel.select
    finally:
        sel.close()
        os.close(fd)


def _run_pipes(
    argv: list[str],
    env: Mapping[str, str],
    cwd: Path | None,
    signals: _Signals,
    observer: Observer | None,
) -> int:
    if observer is None:
        proc = _spawn(argv, env, cwd, signals)
        try:
            with _exit_waiter(proc) as wait_exit:
                return _wait(proc, signals, wait_exit)
        finally:
            if proc.poll() is None:
                terminate(proc, grace=0.5)
    proc = _spawn(argv, env, cwd, signals, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    out = sys.stdout.buffer
    sel = selectors.DefaultSelector()
    sel.register(fd, selectors.EVENT_READ)
    open_ = True
    sleep: Callable[[float], object] = time.sleep

    def poll(timeout: float) -> None:
        nonlocal open_
        if not open_:
            sleep(timeout)
            return
        if sel.select(timeout):
            chunk = os.read(fd, 65536)
            if not chunk:
                sel.unregister(fd)
                open_ = False
                return
            out.write(chunk)
            out.flush()
            observer(chunk)

    try:
        with _exit_waiter(proc) as sleep:
            rc = _wait(proc, signals, poll)
            while open_:
                poll(0.5)
        return rc
    finally:
        sel.close()
        if proc.poll() is None:
            terminate(proc, grace=0.5)


def _winsize(fd: int) -> bytes | None:
    import fcntl
    import termios

    try:
        return fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8)
    except OSError:
        return None


def _set_winsize(fd: int, size: bytes) -> None:
    import fcntl
    import termios

    with contextlib.suppress(OSError):
        fcntl.ioctl(fd, termios.TIOCSWINSZ, size)


def _run_pty(argv: list[str], env: Mapping[str, str], cwd: Path | None, signals: _Signals) -> int:
    import pty
    import termios
    import tty

    stdin, stdout = sys.stdin.fileno(), sys.stdout.fileno()
    master, slave = pty.openpty()
    size = _winsize(stdin) or _winsize(stdout)
    if size is not None:
        _set_winsize(slave, size)

    def on_winch(sig: int, frame: FrameType | None) -> None:
        new = _winsize(stdin) or _winsize(stdout)
        if new is not None:
            _set_winsize(master, new)

    previous_winch = signal.signal(signal.SIGWINCH, on_winch)
    saved = None
    if os.isatty(stdin):
        saved = termios.tcgetattr(stdin)
        tty.setraw(stdin)
    try:
        proc = _spawn(
            argv,
            env,
            cwd,
            signals,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            controlling_tty=0,
        )
        os.close(slave)
        return _pump(proc, master, stdin, stdout, signals)
    finally:
        if saved is not None:
            termios.tcsetattr(stdin, termios.TCSAFLUSH, saved)
        signal.signal(signal.SIGWINCH, previous_winch)
        with contextlib.suppress(OSError):
            os.close(master)


def _pump(
    proc: subprocess.Popen[bytes], master: int, stdin: int, stdout: int, signals: _Signals
) -> int:
    sel = selectors.DefaultSelector()
    sel.register(master, selectors.EVENT_READ)
    with contextlib.suppress(ValueError, OSError):
        sel.register(stdin, selectors.EVENT_READ)
    pty_open = True
    try:
        while pty_open:
            if signals.overdue() and proc.poll() is None:
                terminate(proc)
            for key, _ in sel.select(0.1):
                if key.fd == master:
                    try:
                        data = os.read(master, 65536)
                    except OSError as exc:  # EIO: the harness side is closed
                        if exc.errno != errno.EIO:
                            raise
                        data = b""
                    if not data:
                        pty_open = False
                        break
                    _write_all(stdout, data)
                else:
                    data = os.read(stdin, 65536)
                    if not data:
                        sel.unregister(stdin)
                        continue
                    _write_all(master, data)
            if proc.poll() is not None and not sel.select(0):
                break
        return proc.wait()
    finally:
        sel.close()
        if proc.poll() is None:
            terminate(proc, grace=0.5)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except BlockingIOError:
            time.sleep(0.01)
            continue
        view = view[n:]
