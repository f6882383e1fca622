"""A child process with piped stdio that moves bytes and frames lines — nothing more.

* stdout is split on ``\\n`` only (never on Unicode line separators); a trailing ``\\r`` is kept for the
  parser to judge. A line longer than ``max_line`` is never cut down silently: the reader yields an
  :class:`OverlongLine` (its size and first bytes) and skips to the next newline.
* stderr is drained continuously into a bounded tail (``stderr_tail``), so a chatty child never blocks
  on a full pipe and a crash can be reported with its last words.
* ``tap(direction, line)`` sees every line: ``"in"`` for what we write to the child's stdin, ``"out"``
  for what it prints on stdout, and once ``"exit"`` with the exit code (as ASCII digits) when the
  process is reaped. The recorder uses it; it must not raise (errors are swallowed).
* ``kill()`` ends the whole process group — and every descendant that left it (a sandbox that
  starts its own session) — SIGTERM, a grace period, then SIGKILL.
* Agents die with corral: each child gets its own process group (``start_new_session``) and, on
  Linux, a parent-death signal (:func:`~corral._process._lifecycle.child_setup`); the groups of
  transports still running when the interpreter exits are killed by an ``atexit`` hook, and
  :func:`kill_all_now` does the same from a signal handler.
* ``adopt=`` gives the transport a process started earlier, the same way (:mod:`._early`), instead
  of starting one: :meth:`start` then only connects the event loop to its pipes (:mod:`._adopt`).

stdin stays a pipe for the life of the process (some CLIs print nothing when stdin is a file).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import signal
import weakref
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from .._redact import redact
from ..errors import ProcessError, SpawnError
from ._lifecycle import ProcessId, child_setup, descendants, kill_tree

if TYPE_CHECKING:
    from ._adopt import AdoptedProcess
    from ._spawn import Child

Direction = Literal["in", "out", "exit"]
Tap = Callable[[Direction, bytes], None]

DEFAULT_MAX_LINE = 16 * 1024 * 1024
"""Longest stdout line accepted (16 MiB): large file reads and images fit, runaway output does not."""
_CHUNK = 256 * 1024
_STDERR_TAIL = 16 * 1024
_live: weakref.WeakSet[ProcessTransport] = weakref.WeakSet()


def kill_all_now() -> int:
    """SIGKILL the process group of every transport still running (signal handlers, exit)."""
    hit = 0
    for transport in list(_live):
        proc = transport._proc
        if proc is not None and proc.returncode is None:
            transport.killed_by_us = True
            transport._signal(signal.SIGKILL)
            hit += 1
    return hit


atexit.register(kill_all_now)


class OverlongLine:
    """Stands in for a stdout line longer than the limit; the line itself was dropped."""

    __slots__ = ("head", "size")

    def __init__(self, size: int, head: bytes) -> None:
        self.size = size
        self.head = head

    def __repr__(self) -> str:
        return f"OverlongLine(size={self.size}, head={self.head[:40]!r})"


class ProcessTransport:
    """One child process. Use :meth:`start`, then :meth:`lines` / :meth:`write_line`, then :meth:`kill`."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        max_line: int = DEFAULT_MAX_LINE,
        tap: Tap | None = None,
        adopt: Child | None = None,
    ) -> None:
        self.argv = list(argv)
        self._adopt = adopt
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.max_line = max_line
        self.tap = tap
        self.killed_by_us = False
        self._proc: asyncio.subprocess.Process | AdoptedProcess | None = None
        self._stderr: deque[bytes] = deque()
        self._stderr_len = 0
        self._stderr_task: asyncio.Task[None] | None = None
        self._write_lock = asyncio.Lock()
        self._exit_noted = False

    # ── lifecycle ──
    async def start(self) -> None:
        if self._adopt is not None:
            from ._adopt import adopt

            child, self._adopt = self._adopt, None
            self._proc = await adopt(child, limit=_CHUNK)
            _live.add(self)
            self._stderr_task = asyncio.create_task(self._drain_stderr(), name="stderr-tail")
            return
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self.env,
                cwd=self.cwd,
                start_new_session=True,
                preexec_fn=child_setup,
                limit=_CHUNK,
            )
        except OSError as exc:
            raise SpawnError(self.argv, str(exc)) from exc
        _live.add(self)
        self._stderr_task = asyncio.create_task(self._drain_stderr(), name="stderr-tail")

    async def __aenter__(self) -> ProcessTransport:
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
        """The last stderr bytes, decoded, with secrets redacted (:mod:`corral._redact`): key
        shapes and the values of the child's ``*_KEY`` / ``*_TOKEN`` / ``*_SECRET`` variables."""
        return redact(b"".join(self._stderr).decode("utf-8", errors="replace"), self.env)

    def _proc_or_raise(self) -> asyncio.subprocess.Process | AdoptedProcess:
        if self._proc is None:
            raise ProcessError("process not started")
        return self._proc

    # ── stdout ──
    async def lines(self) -> AsyncIterator[bytes | OverlongLine]:
        """Every stdout line (without its ``\\n``) until EOF; a last unterminated line is yielded too."""
        proc = self._proc_or_raise()
        assert proc.stdout is not None
        buf = bytearray()
        skipping: int | None = None  # bytes of an overlong line seen so far
        head = b""
        while True:
            chunk = await proc.stdout.read(_CHUNK)
            if not chunk:
                break
            start = 0
            while True:
                nl = chunk.find(b"\n", start)
                if nl < 0:
                    piece = chunk[start:]
                    if skipping is not None:
                        skipping += len(piece)
                    else:
                        buf += piece
                        if len(buf) > self.max_line:
                            skipping, head = len(buf), bytes(buf[:256])
                            buf.clear()
                    break
                piece = chunk[start:nl]
                start = nl + 1
                if skipping is not None:
                    yield OverlongLine(skipping + len(piece), head)
                    skipping = None
                    continue
                if buf:
                    buf += piece
                    line = bytes(buf)
                    buf.clear()
                else:
                    line = piece
                if len(line) > self.max_line:
                    yield OverlongLine(len(line), line[:256])
                    continue
                self._tap("out", line)
                yield line
        if skipping is not None:
            yield OverlongLine(skipping, head)
        elif buf:
            line = bytes(buf)
            self._tap("out", line)
            yield line

    # ── stdin ──
    async def write_line(self, data: bytes) -> None:
        """Write one line (a ``\\n`` is appended) and drain; raises ProcessError if stdin is gone."""
        proc = self._proc_or_raise()
        assert proc.stdin is not None
        async with self._write_lock:
            try:
                proc.stdin.write(data + b"\n")
                await proc.stdin.drain()
            except (BrokenPipeError, ConnectionResetError, RuntimeError) as exc:
                raise ProcessError(
                    "agent stdin is closed", proc.returncode, self.stderr_tail
                ) from exc
        self._tap("in", data)

    async def close_stdin(self) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None:
            return
        with contextlib.suppress(OSError, RuntimeError):
            proc.stdin.close()
            await proc.stdin.wait_closed()

    # ── ending ──
    async def wait(self, timeout: float | None = None) -> int:
        proc = self._proc_or_raise()
        code = await asyncio.wait_for(proc.wait(), timeout)
        await self._finish_stderr()
        self._note_exit()
        return code

    async def kill(self, grace: float = 3.0) -> int | None:
        """End the process group: SIGTERM, wait ``grace`` seconds, then SIGKILL. Idempotent."""
        proc = self._proc
        if proc is None:
            return None
        # Descendants that left the group (their own session) are found now, while they are
        # still the leader's descendants, and killed by identity once the group is gone.
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
            # The leader is gone; stragglers in its group must not outlive the session.
            self._signal(signal.SIGKILL)
        kill_tree(strays)
        _live.discard(self)
        await self.close_stdin()
        await self._finish_stderr()
        self._note_exit()
        return proc.returncode

    def _note_exit(self) -> None:
        if not self._exit_noted and self._proc is not None and self._proc.returncode is not None:
            self._exit_noted = True
            _live.discard(self)
            self._tap("exit", str(self._proc.returncode).encode())

    def signal_group(self, sig: signal.Signals) -> None:
        """Send ``sig`` to the agent's process group (no-op once it has exited)."""
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

    # ── stderr ──
    async def _drain_stderr(self) -> None:
        proc = self._proc
        assert proc is not None and proc.stderr is not None
        while True:
            chunk = await proc.stderr.read(_CHUNK)
            if not chunk:
                return
            self._stderr.append(chunk)
            self._stderr_len += len(chunk)
            if self._stderr_len > 2 * _STDERR_TAIL:
                joined = b"".join(self._stderr)[-_STDERR_TAIL:]
                self._stderr.clear()
                self._stderr.append(joined)
                self._stderr_len = len(joined)

    async def _finish_stderr(self) -> None:
        task = self._stderr_task
        if task is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), 1.0)
        except TimeoutError:
            # A grandchild may still hold stderr open; stop reading rather than hang.
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        # The tail is bounded to the last _STDERR_TAIL bytes.
        joined = b"".join(self._stderr)[-_STDERR_TAIL:]
        self._stderr.clear()
        self._stderr.append(joined)
        self._stderr_len = len(joined)

    def _tap(self, direction: Direction, line: bytes) -> None:
        if self.tap is not None:
            with contextlib.suppress(Exception):
                self.tap(direction, line)
