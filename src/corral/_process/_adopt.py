"""The hand-over of an early process (:mod:`._early`) to its driver's event loop.

:class:`Handover` is a :class:`~corral._process.TransportFactory` wrapped around the driver's
own: the first launch the driver asks for, when it is exactly the early process's argv, env and
cwd, gets a :class:`~corral._process.ProcessTransport` over that process; any other launch (a
driver that built something else, a restart) gets the driver's own factory, and an early process
nobody asked for is discarded. An early process that was given its prompt on the command line (a
one-process-per-prompt driver) and is not what the driver asks for is a
:class:`~corral.errors.SpawnError` instead: it was running that prompt already.

:func:`adopt` gives such a transport what ``asyncio.create_subprocess_exec`` would have: stream
readers on stdout and stderr, a stream writer on stdin (``connect_read_pipe`` /
``connect_write_pipe`` over the very pipes the process was started with, so no byte is lost or
reordered) and the exit code once the process is reaped: through a pidfd on the loop where the
kernel has them, else a thread that waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import SpawnError
from ._early import EarlyProcess
from ._line import LineTransport, TransportFactory
from ._spawn import Child
from ._transport import Tap


class AdoptedProcess:
    """An already started child as an ``asyncio.subprocess.Process`` is used by the transport:
    ``pid``, ``returncode``, ``stdin`` / ``stdout`` / ``stderr`` streams, ``wait()``,
    ``send_signal()``."""

    def __init__(
        self,
        child: Child,
        stdin: asyncio.StreamWriter,
        stdout: asyncio.StreamReader,
        stderr: asyncio.StreamReader,
        pipes: dict[int, asyncio.BaseTransport],
    ) -> None:
        self._child = child
        self.pid = child.pid
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self._pipes = pipes
        self._exited = asyncio.get_running_loop().create_future()

    @property
    def returncode(self) -> int | None:
        return self._child.returncode if self._exited.done() else None

    async def wait(self) -> int:
        return await asyncio.shield(self._exited)

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, sig)

    def get_pipe_transport(self, fd: int) -> asyncio.BaseTransport | None:
        """The pipe transport of ``fd`` (0, 1, 2), as asyncio's subprocess transport has it."""
        pipe = self._pipes.get(fd)
        return None if pipe is None or pipe.is_closing() else pipe

    @property
    def _transport(self) -> AdoptedProcess:  # where ChunkProcessTransport looks for its pipes
        return self

    def _reaped(self) -> None:
        if not self._exited.done() and self._child.poll() is not None:
            self._exited.set_result(self._child.returncode)


async def adopt(child: Child, *, limit: int) -> AdoptedProcess:
    """The event loop's hold on ``child``'s pipes and exit (see the module docstring)."""
    loop = asyncio.get_running_loop()
    stdout = asyncio.StreamReader(limit=limit, loop=loop)
    stderr = asyncio.StreamReader(limit=limit, loop=loop)
    out_pipe, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(stdout, loop=loop), child.stdout
    )
    err_pipe, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(stderr, loop=loop), child.stderr
    )
    in_pipe, in_protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader(loop=loop), loop=loop),
        child.stdin,
    )
    stdin = asyncio.StreamWriter(in_pipe, in_protocol, None, loop)
    process = AdoptedProcess(child, stdin, stdout, stderr, {0: in_pipe, 1: out_pipe, 2: err_pipe})
    _watch_exit(process, child, loop)
    return process


def _watch_exit(process: AdoptedProcess, child: Child, loop: asyncio.AbstractEventLoop) -> None:
    pidfd: int | None = None
    with contextlib.suppress(AttributeError, OSError):
        pidfd = os.pidfd_open(child.pid)
    if pidfd is not None:
        fd = pidfd

        def readable() -> None:
            loop.remove_reader(fd)
            os.close(fd)
            process._reaped()

        loop.add_reader(fd, readable)
        return

    def waiter() -> None:
        child.wait()
        with contextlib.suppress(RuntimeError):  # the loop closed first
            loop.call_soon_threadsafe(process._reaped)

    threading.Thread(target=waiter, name=f"wait-{child.pid}", daemon=True).start()


class Handover:
    """A transport factory that hands ``early`` to the first matching launch (module docstring)."""

    def __init__(self, early: EarlyProcess, fallback: TransportFactory) -> None:
        self.early: EarlyProcess | None = early
        self.fallback = fallback
        self.adopted = False

    def __call__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        tap: Tap | None = None,
    ) -> LineTransport:
        early, self.early = self.early, None
        if early is not None:
            if early.matches(argv, env, cwd):  # even if it exited: its output and code are its
                from ._transport import ProcessTransport

                self.adopted = True
                return ProcessTransport(argv, env=env, cwd=cwd, tap=tap, adopt=early.claim())
            early.discard()
            if early.prompted:
                # It had the prompt and was acting on it: a second process would run it again.
                raise SpawnError(
                    list(argv),
                    "the driver's launch differs from the early launch of the same prompt "
                    "(a corral bug: the early-launch hook and its driver disagree); the prompt "
                    "was not run a second time",
                )
        return self.fallback(argv, env=env, cwd=cwd, tap=tap)

    def discard(self) -> None:
        """End the early process if no launch claimed it."""
        early, self.early = self.early, None
        if early is not None:
            early.discard()


def hand_over(adapter: Any, early: EarlyProcess) -> Handover | None:
    """Give ``adapter``'s next launch ``early``: its ``transport_factory`` wrapped in a
    :class:`Handover`; ``None`` (and ``early`` discarded) for a driver without that seam."""
    fallback = getattr(adapter, "transport_factory", None)
    if fallback is None:
        early.discard()
        return None
    handover = Handover(early, fallback)
    adapter.transport_factory = handover
    return handover
