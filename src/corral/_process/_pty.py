"""A child process on a pseudo-terminal, for the shell grade (seed 000): bytes in, bytes out.

* The child is the leader of its own session and process group, with the PTY's slave side as its
  controlling terminal (``TIOCSCTTY``) and a real window size (``TIOCSWINSZ``, default 120x40), so a
  TUI draws as it would in a terminal. ``TERM`` defaults to ``xterm-256color``.
* It dies with corral: the parent-death signal of every agent process
  (:func:`~corral._process._lifecycle.child_setup`), an ``atexit`` hook that kills the group of
  every terminal still running, and :meth:`PtyTransport.kill`.
* ``chunks()`` yields what the terminal printed, as it arrives, until the child closed the terminal;
  every read is bounded by the caller (``read(timeout)``) and nothing is ever cut or decoded here.
* ``stop()`` is the ladder for a terminal program: Ctrl-C (written as the byte a keyboard sends,
  ``\\x03``, twice), then SIGTERM to the group, then SIGKILL — each step waiting a bound.
* ``tap(direction, data)`` sees every write (``"in"``), every chunk read (``"out"``) and the exit
  code (``"exit"``); it must not raise (errors are swallowed).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import fcntl
import os
import signal
import struct
import termios
import weakref
from collections import deque
from collections.abc import AsyncIterator, Mapping, Sequence

from .._redact import redact
from ..errors import ProcessError, SpawnError
from ._lifecycle import ProcessId, child_setup, descendants, kill_tree
from ._transport import Tap

DEFAULT_COLUMNS = 120
DEFAULT_ROWS = 40
_CHUNK = 64 * 1024
_TAIL = 16 * 1024
CTRL_C = b"\x03"
_live: weakref.WeakSet[PtyTransport] = weakref.WeakSet()


def kill_all_terminals() -> int:
    """SIGKILL the process group of every terminal still running (exit, signal handlers)."""
    hit = 0
    for transport in list(_live):
        if transport.returncode is None and transport.pid is not None:
            transport.killed_by_us = True
            transport._signal(signal.SIGKILL)
            hit += 1
    return hit


atexit.register(kill_all_terminals)


def _pty_child_setup() -> None:
    """``preexec_fn``: die with the parent, then take the terminal on fd 0 as controlling tty.

    Runs after ``setsid`` (``start_new_session``) in the forked child; one ``prctl`` and one
    ``ioctl``, both async-signal-safe."""
    child_setup()
    with contextlib.suppress(OSError):
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class PtyTransport:
    """One program in a terminal. :meth:`start`, then :meth:`write` / :meth:`read`, then
    :meth:`stop` or :meth:`kill`."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        columns: int = DEFAULT_COLUMNS,
        rows: int = DEFAULT_ROWS,
        tap: Tap | None = None,
    ) -> None:
        if not argv:
            raise SpawnError(list(argv), "empty command")
        self.argv = list(argv)
        base = dict(os.environ if env is None else env)
        base.setdefault("TERM", "xterm-256color")
        base["COLUMNS"], base["LINES"] = str(columns), str(rows)
        self.env = base
        self.cwd = cwd
        self.columns = columns
        self.rows = rows
        self.tap = tap
        self.killed_by_us = False
        self._proc: asyncio.subprocess.Process | None = None
        self._master: int | None = None
        self._chunks: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._eof = False
        self._tail: deque[bytes] = deque()
        self._tail_len = 0
        self._exit_noted = False

    # ── lifecycle ──
    async def start(self) -> None:
        master, slave = os.openpty()
        try:
            fcntl.ioctl(
                slave, termios.TIOCSWINSZ, struct.pack("HHHH", self.rows, self.columns, 0, 0)
            )
            self._proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=slave,
                stdout=slave,
                stderr=slave,
                env=self.env,
                cwd=self.cwd,
                start_new_session=True,
                preexec_fn=_pty_child_setup,
            )
        except OSError as exc:
            os.close(master)
            raise SpawnError(self.argv, str(exc)) from exc
        finally:
            os.close(slave)
        os.set_blocking(master, False)
        self._master = master
        _live.add(self)
        asyncio.get_running_loop().add_reader(master, self._on_readable)

    async def __aenter__(self) -> PtyTransport:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.kill()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode if self._proc else None

    @property
    def stderr_tail(self) -> str:
        """The terminal's last output (a terminal has no separate stderr), secrets redacted."""
        return redact(b"".join(self._tail).decode("utf-8", errors="replace"), self.env)

    @property
    def at_eof(self) -> bool:
        return self._eof

    # ── reading ──
    def _on_readable(self) -> None:
        fd = self._master
        if fd is None:
            return
        try:
            data = os.read(fd, _CHUNK)
        except BlockingIOError:
            return
        except OSError:  # EIO: every holder of the slave side closed it
            data = b""
        if not data:
            self._close_master()
            return
        self._keep_tail(data)
        self._tap("out", data)
        self._chunks.put_nowait(data)

    def _keep_tail(self, data: bytes) -> None:
        self._tail.append(data)
        self._tail_len += len(data)
        if self._tail_len > 2 * _TAIL:
            joined = b"".join(self._tail)[-_TAIL:]
            self._tail.clear()
            self._tail.append(joined)
            self._tail_len = len(joined)

    def _close_master(self) -> None:
        fd, self._master = self._master, None
        if fd is None:
            return
        with contextlib.suppress(Exception):
            asyncio.get_running_loop().remove_reader(fd)
        with contextlib.suppress(OSError):
            os.close(fd)
        self._eof = True
        self._chunks.put_nowait(None)

    async def read(self, timeout: float) -> bytes | None:
        """The next chunk the terminal printed; ``b""`` when none came within ``timeout`` seconds,
        ``None`` once the terminal is closed (the program and its children are gone)."""
        if self._eof and self._chunks.empty():
            return None
        try:
            return await asyncio.wait_for(self._chunks.get(), timeout)
        except TimeoutError:
            return b""

    async def chunks(self) -> AsyncIterator[bytes]:
        """Every chunk until the terminal closes."""
        while True:
            chunk = await self._chunks.get()
            if chunk is None:
                return
            yield chunk

    # ── writing ──
    async def write(self, data: bytes, *, timeout: float = 5.0) -> None:
        """Type ``data`` into the terminal (all of it, within ``timeout``); ``ProcessError`` once
        the terminal is closed."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        view = memoryview(data)
        while view:
            fd = self._master
            if fd is None or self.returncode is not None:
                raise ProcessError(
                    "the agent's terminal is closed", self.returncode, self.stderr_tail
                )
            try:
                written = os.write(fd, view)
            except BlockingIOError:
                written = 0
            except OSError as exc:
                raise ProcessError(
                    "the agent's terminal is closed", self.returncode, self.stderr_tail
                ) from exc
            view = view[written:]
            if view:
                if loop.time() >= deadline:
                    raise ProcessError(
                        "the agent does not read its terminal", None, self.stderr_tail
                    )
                await asyncio.sleep(0.01)
        self._tap("in", data)

    # ── ending ──
    async def wait(self, timeout: float | None = None) -> int:
        if self._proc is None:
            raise ProcessError("process not started")
        code = await asyncio.wait_for(self._proc.wait(), timeout)
        self._note_exit()
        return code

    async def stop(self, *, ctrl_c_wait: float = 1.5, grace: float = 2.0) -> int | None:
        """The terminal ladder: Ctrl-C twice (how a user leaves most TUIs), wait ``ctrl_c_wait``;
        then :meth:`kill` (SIGTERM, ``grace``, SIGKILL). Idempotent, bounded."""
        if self._proc is None:
            return None
        if self._proc.returncode is None:
            with contextlib.suppress(ProcessError):
                await self.write(CTRL_C, timeout=0.5)
                await asyncio.sleep(0.2)
                await self.write(CTRL_C, timeout=0.5)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._proc.wait(), ctrl_c_wait)
        return await self.kill(grace)

    async def kill(self, grace: float = 3.0) -> int | None:
        """End the process group: SIGTERM, wait ``grace`` seconds, then SIGKILL; descendants
        that left the group are ended by identity. Idempotent."""
        proc = self._proc
        if proc is None:
            return None
        strays: list[ProcessId] = descendants(proc.pid) if proc.returncode is None else []
        if proc.returncode is None:
            self.killed_by_us = True
            self._signal(signal.SIGTERM)
            kill_tree(strays, signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), grace)
            except TimeoutError:
                self._signal(signal.SIGKILL)
                await proc.wait()
        else:
            self._signal(signal.SIGKILL)
        kill_tree(strays)
        _live.discard(self)
        self._close_master()
        self._note_exit()
        return proc.returncode

    def signal_group(self, sig: signal.Signals) -> None:
        """Send ``sig`` to the program's process group (no-op once it has exited)."""
        if self._proc is not None and self._proc.returncode is None:
            self._signal(sig)

    def _signal(self, sig: signal.Signals) -> None:
        proc = self._proc
        if proc is None:
            return
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            with contextlib.suppress(ProcessLookupError):
                if proc.returncode is None:
                    proc.send_signal(sig)

    def _note_exit(self) -> None:
        if not self._exit_noted and self._proc is not None and self._proc.returncode is not None:
            self._exit_noted = True
            _live.discard(self)
            self._tap("exit", str(self._proc.returncode).encode())

    def _tap(self, direction: str, data: bytes) -> None:
        if self.tap is not None:
            with contextlib.suppress(Exception):
                self.tap(direction, data)  # type: ignore[arg-type]
