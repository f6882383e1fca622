"""The seam between a driver and its agent process: :class:`LineTransport` and its factory.

Every line-speaking driver (stream-json, ACP, Codex app-server and exec, Pi RPC) gets its transport
from ``self.transport_factory(argv, env=..., cwd=..., tap=...)``. The default is
:class:`~corral._process.ProcessTransport` (a real child process); a test sets the attribute to
:meth:`corral.testing.ReplayTransport.factory` to play a recorded transcript into the real driver,
so approval routing, control replies, restarts and end-of-session classification run exactly the
code that runs live.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Protocol, runtime_checkable

from ._stop import AgentProcess
from ._transport import OverlongLine, ProcessTransport, Tap


@runtime_checkable
class LineTransport(AgentProcess, Protocol):
    """What a driver may do with its agent: start it, read and write lines, end it (``kill``,
    ``pid``, ``returncode``, ``stderr_tail``: :class:`~corral._process.AgentProcess`)."""

    argv: list[str]
    killed_by_us: bool
    """True once :meth:`kill` had to end a running process (it did not exit on its own)."""

    async def start(self) -> None: ...

    def lines(self) -> AsyncIterator[bytes | OverlongLine]:
        """Every stdout line (without ``\\n``) until EOF."""
        ...

    async def write_line(self, data: bytes) -> None:
        """Write one line (``\\n`` appended); ``ProcessError`` when stdin is gone."""
        ...

    async def close_stdin(self) -> None: ...

    async def wait(self, timeout: float | None = None) -> int:
        """The exit code, waiting at most ``timeout`` seconds (``TimeoutError`` after)."""
        ...


class TransportFactory(Protocol):
    """Builds the transport of one agent process."""

    def __call__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        tap: Tap | None = None,
    ) -> LineTransport: ...


DEFAULT_TRANSPORT: TransportFactory = ProcessTransport
"""The factory every driver uses unless told otherwise: a real child process."""
