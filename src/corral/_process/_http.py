"""The seam between an HTTP-speaking driver and its agent server: :class:`HttpTransport`.

The OpenCode server driver does not read and write lines; it runs ``opencode serve``, makes HTTP
requests to it and reads one Server-Sent Events stream. It gets all three from
``self.transport_factory(argv, env=..., cwd=..., url=..., auth=..., tap=...)``, as the line
drivers get their :class:`~corral._process.LineTransport`. The default is
:class:`~corral._process.ServerTransport` (a real child process and a loopback HTTP client); a
test sets the attribute to :meth:`corral.testing.HttpRecording.factory` to play a recorded server
exchange into the real driver, so approval routing, the abort ladder and end-of-session
classification run exactly the code that runs live.

What the transport taps (``tap(direction, bytes)``), which is what ``corral record`` writes:

* ``"in"`` — one HTTP exchange, as JSON: ``{"method", "path", "body", "status", "response"}``
  (``"error"`` instead of status and response when no answer came). It is tapped in the order the
  requests were *made*: an event that arrives while a request is in flight is tapped after it, so
  a replay releases it only once the driver has made that request.
* ``"out"`` — the ``data`` of one event of the stream.
* ``"exit"`` — the server's exit code, once, when it is reaped.
"""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ._server import REQUEST_TIMEOUT, HttpReply, RequestFailed, ServerTransport
from ._stop import AgentProcess
from ._transport import Tap


@runtime_checkable
class HttpTransport(AgentProcess, Protocol):
    """What a driver may do with its agent server: start it, ask it, listen to it, end it
    (``kill``: SIGTERM to its process group, ``grace`` seconds, then SIGKILL; ``pid``,
    ``returncode`` and ``stderr_tail`` as for every :class:`~corral._process.AgentProcess`)."""

    argv: list[str]
    url: str

    @property
    def killed_by_us(self) -> bool:
        """True once :meth:`kill` had to end a running server (it did not exit on its own)."""
        ...

    async def start(self) -> None: ...

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: Any = None,
        timeout: float = REQUEST_TIMEOUT,
    ) -> HttpReply:
        """One request (``body`` sent as JSON); :class:`RequestFailed` when nothing answered
        (``timed_out`` set when the request went out and its time ran out)."""
        ...

    def events(
        self,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        on_connect: Callable[[], Awaitable[None]] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> AsyncIterator[str]:
        """The ``data`` of every event of the stream at ``path``, reconnecting until
        :meth:`close_events`; ``on_connect`` runs after each (re)connection."""
        ...

    def close_events(self) -> None: ...

    async def printed(self, marker: bytes, timeout: float) -> bool:
        """True once the server has printed a line holding ``marker`` (a line still in the kept
        tail of its output, or one printed later); False when ``timeout`` passes or its output
        ends first (a replay has no output: False at once)."""
        ...

    async def wait(self) -> int:
        """The server's exit code, once it exited and its last output was read."""
        ...

    def signal_group(self, sig: signal.Signals) -> None:
        """Signal the server's process group (the stop ladder's SIGINT step)."""
        ...

    async def aclose(self) -> None:
        """Release the HTTP client (after :meth:`kill`)."""
        ...


class HttpTransportFactory(Protocol):
    """Builds the transport of one agent server."""

    def __call__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        url: str,
        auth: tuple[str, str] | None = None,
        tap: Tap | None = None,
    ) -> HttpTransport: ...


DEFAULT_HTTP_TRANSPORT: HttpTransportFactory = ServerTransport
"""The factory the OpenCode server driver uses unless told otherwise: a real server process."""

__all__ = [
    "DEFAULT_HTTP_TRANSPORT",
    "REQUEST_TIMEOUT",
    "HttpReply",
    "HttpTransport",
    "HttpTransportFactory",
    "RequestFailed",
]
