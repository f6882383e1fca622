"""Play a recorded agent-server exchange into a real HTTP driver (the OpenCode server driver).

The counterpart of :class:`~corral.testing.ReplayTransport` for drivers that get an
:class:`~corral._process.HttpTransport`. A transcript written by ``corral record opencode …`` has
the same layout as a line transcript: ``{"dir": "in", "line": <exchange>}`` for each HTTP request
the driver made, in the order it made them (``{"method", "path", "body", "status", "response"}``,
or ``"error"`` when nothing answered), ``{"dir": "out", "line": <event data>}`` for each event of
the SSE stream, and ``{"dir": "exit", "code": N}`` where the server ended::

    recording = HttpRecording.load(path)
    adapter.transport_factory = recording.factory
    await adapter.start("s1")          # the real driver: readiness probes, session, /event …
    ...
    recording.check()                  # every request made, every event read, nothing diverged

Both directions are checked and answered, with the rules of :mod:`corral.testing._replay`:

* each request the driver makes is matched with the next recorded exchange by method, path and the
  ``reply`` of a permission answer (``once`` / ``always`` / ``reject``); a different request is a
  :class:`~corral.testing.ReplayDivergence`. The recorded status and body are the answer (or
  :class:`~corral._process.RequestFailed` for a recorded failure).
* an event is released only after every request recorded before it was made, so the server
  "answers" what the driver asked, when it asked: an abort's ``session.error`` arrives once the
  driver has sent the abort.

The server exits when the driver kills it (``-15``), unless the recording says it died by itself
(an exit code other than a termination signal's): then it exits once the events before it are
read, and the driver classifies the end of the session. A reconnect of the event stream is not
reproduced (a replay has one connection); ``on_connect`` runs once, before the first event.
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any

from .._process import REQUEST_TIMEOUT, HttpReply, RequestFailed, Tap
from ._replay import DEFAULT_WAIT, Recording, ReplayTransport

REPLAY_URL = "http://127.0.0.1:0"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def exchange_shape(msg: Any) -> tuple[Any, ...]:
    """What must match between a request the driver makes and the recorded one."""
    msg = _dict(msg)
    return ("http", msg.get("method"), msg.get("path"), _dict(msg.get("body")).get("reply"))


class HttpReplayTransport(ReplayTransport):
    """One recorded agent server, behind the :class:`corral._process.HttpTransport` interface."""

    shape_of = staticmethod(exchange_shape)

    def __init__(
        self,
        entries: Sequence[Mapping[str, Any]],
        *,
        argv: Sequence[str] = (),
        url: str = REPLAY_URL,
        tap: Tap | None = None,
        agent_exits: bool | None = None,
        wait: float = DEFAULT_WAIT,
        problems: list[str] | None = None,
    ) -> None:
        super().__init__(
            entries, argv=argv, tap=tap, agent_exits=agent_exits, wait=wait, problems=problems
        )
        self.url = url
        self.signals: list[signal.Signals] = []
        """Signals the driver sent the server's process group (the stop ladder's SIGINT)."""
        self._closed = asyncio.Event()

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: Any = None,
        timeout: float = REQUEST_TIMEOUT,
    ) -> HttpReply:
        if not self._started:
            raise RequestFailed("the server was not started")
        sent = {"method": method, "path": path, "body": body}
        recorded = _dict(self._accept(sent))
        answer = {k: recorded[k] for k in ("status", "response", "error") if k in recorded}
        self._tap("in", json.dumps({**sent, **answer}, ensure_ascii=False).encode())
        status = recorded.get("status")
        if not isinstance(status, int):
            raise RequestFailed(f"{method} {path}: {recorded.get('error', 'no answer')} (recorded)")
        return HttpReply(status, recorded.get("response"))

    async def events(
        self,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        on_connect: Callable[[], Awaitable[None]] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> AsyncIterator[str]:
        if on_connect is not None:
            await on_connect()
        async for raw in self.lines():
            yield raw.decode("utf-8", "replace") if isinstance(raw, bytes) else ""
        await self._closed.wait()  # a live stream keeps reconnecting until it is closed

    def close_events(self) -> None:
        self._closed.set()

    async def printed(self, marker: bytes, timeout: float) -> bool:
        return False  # a transcript holds the exchanges and events, not the server's output

    def signal_group(self, sig: signal.Signals) -> None:
        if self.returncode is None:
            self.signals.append(sig)

    async def aclose(self) -> None:
        self._closed.set()


class HttpRecording(Recording):
    """A server transcript as a ``transport_factory``: one :class:`HttpReplayTransport` per server."""

    transports: list[HttpReplayTransport]  # type: ignore[assignment]

    def factory(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        url: str = REPLAY_URL,
        auth: tuple[str, str] | None = None,
        tap: Tap | None = None,
    ) -> HttpReplayTransport:
        """An HTTP ``transport_factory``: the next recorded server."""
        return self._next(HttpReplayTransport, argv, tap, url=url)
