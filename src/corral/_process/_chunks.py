"""The process transport for agents whose stdout is text, not lines of a protocol.

A plain agent (``plain-argv``, ``plain-stdin``) may print half a line and wait — a streamed answer
arrives token by token without a newline — so its driver reads stdout as it comes: :meth:`chunks`
yields every read (at most 256 KiB), never waiting for a line end and never cutting or joining
anything. Everything else is :class:`~corral._process.ProcessTransport`'s: its own process group
and parent-death signal, the bounded, redacted stderr tail, ``kill()``'s SIGTERM → grace → SIGKILL
over the group and its strays, and the ``tap`` (``"out"`` sees each chunk as read, ``"in"`` what
was written to stdin, ``"exit"`` the exit code).

:class:`ChunkTransport` is the seam's protocol (a driver gets one from a
:class:`ChunkTransportFactory`); :class:`ChunkProcessTransport` is the real child process.
"""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Protocol, runtime_checkable

from ._stop import AgentProcess
from ._transport import _CHUNK, ProcessTransport, Tap


@runtime_checkable
class ChunkTransport(AgentProcess, Protocol):
    """What a plain driver may do with its agent process."""

    argv: list[str]
    killed_by_us: bool

    async def start(self) -> None: ...

    def chunks(self) -> AsyncIterator[bytes]:
        """stdout as it arrives, until EOF."""
        ...

    async def write_line(self, data: bytes) -> None: ...

    async def close_stdin(self) -> None: ...

    def close_stdout(self) -> None:
        """Stop reading stdout for good (a reader gave up before EOF; its pipe must not leak)."""
        ...

    async def wait(self, timeout: float | None = None) -> int: ...

    def signal_group(self, sig: signal.Signals) -> None: ...


class ChunkTransportFactory(Protocol):
    """Builds the transport of one plain agent process."""

    def __call__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        tap: Tap | None = None,
    ) -> ChunkTransport: ...


class ChunkProcessTransport(ProcessTransport):
    """A child process whose stdout is read in chunks (:meth:`chunks`) rather than lines."""

    async def chunks(self) -> AsyncIterator[bytes]:
        proc = self._proc_or_raise()
        assert proc.stdout is not None
        while True:
            chunk = await proc.stdout.read(_CHUNK)
            if not chunk:
                return
            self._tap("out", chunk)
            yield chunk

    def close_stdout(self) -> None:
        """Close the stdout pipe. A reader that stopped before EOF (a background child of the agent
        held stdout open past the grace) leaves asyncio's pipe transport open: one descriptor per
        turn, and a ResourceWarning when it is collected. Idempotent; a no-op before the start."""
        proc = self._proc
        # asyncio.subprocess.Process keeps its SubprocessTransport in ``_transport``; its
        # ``get_pipe_transport(1)`` is stdout's read pipe (None once closed).
        transport = getattr(proc, "_transport", None) if proc is not None else None
        pipe = transport.get_pipe_transport(1) if transport is not None else None
        if pipe is not None:
            pipe.close()


DEFAULT_CHUNK_TRANSPORT: ChunkTransportFactory = ChunkProcessTransport
"""A real child process; a test plugs in its own factory."""
