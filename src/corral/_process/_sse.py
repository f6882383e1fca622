"""A Server-Sent Events client over httpx: frames ``text/event-stream`` and reconnects.

Only bytes and framing live here (no JSON, no vendor types). :func:`parse_sse_lines` is the pure
framer (WHATWG rules: ``data:`` lines joined with ``\\n``, ``event:``, ``id:``, ``retry:``, comment
lines starting with ``:`` ignored, a blank line dispatches). :class:`SseClient` opens the stream,
yields :class:`SseMessage` values, and when the connection drops it reconnects after ``retry``
seconds (sending ``Last-Event-ID`` when the server gave ids) until :meth:`SseClient.close`.

Delivery across a reconnect is at-most-once unless the server replays from ``Last-Event-ID``:
whatever the server emitted while no connection was open is lost. The ``on_connect`` callback
fires after each (re)connection so a caller can re-read state it may have missed.

Why not ``httpx-sse``: the framing is forty lines, and reconnect with a deadline and a callback is
what we actually need; see ``docs/decisions/010-opencode-server-and-pi-rpc.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass

import httpx

MAX_EVENT_BYTES = 32 * 1024 * 1024
"""Largest single event accepted; a bigger one ends the connection (and is reconnected)."""


@dataclass(frozen=True)
class SseMessage:
    """One dispatched event."""

    data: str
    event: str = "message"
    id: str | None = None


class SseFramer:
    """Incremental WHATWG event-stream framer: feed lines (without their terminator), get messages."""

    def __init__(self) -> None:
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None
        self._size = 0
        self.last_id: str | None = None
        self.retry_ms: int | None = None

    def feed_line(self, line: str) -> SseMessage | None:
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._size += len(value)
            if self._size > MAX_EVENT_BYTES:
                raise ValueError(f"SSE event larger than {MAX_EVENT_BYTES} bytes")
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry" and value.isdigit():
            self.retry_ms = int(value)
        return None

    def _dispatch(self) -> SseMessage | None:
        if self._id is not None:
            self.last_id = self._id
        if not self._data:
            self._event = ""
            return None
        msg = SseMessage(data="\n".join(self._data), event=self._event or "message", id=self._id)
        self._data, self._event, self._size = [], "", 0
        return msg


def parse_sse_lines(lines: Iterable[str]) -> list[SseMessage]:
    """Frame a finished stream's lines into messages (a trailing undispatched event is dropped)."""
    framer = SseFramer()
    out: list[SseMessage] = []
    for line in lines:
        msg = framer.feed_line(line)
        if msg is not None:
            out.append(msg)
    return out


class SseClient:
    """``async for msg in SseClient(client, url)``: every event, reconnecting until closed."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        url: str,
        *,
        params: Mapping[str, str] | None = None,
        retry: float = 0.5,
        connect_timeout: float = 5.0,
        on_connect: Callable[[], Awaitable[None]] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        self._client = client
        self._url = url
        self._params = dict(params or {})
        self._retry = retry
        self._connect_timeout = connect_timeout
        self._on_connect = on_connect
        self._on_error = on_error
        self._closed = asyncio.Event()
        self._last_id: str | None = None
        self.connections = 0

    def close(self) -> None:
        self._closed.set()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    async def __aiter__(self) -> AsyncIterator[SseMessage]:
        while not self._closed.is_set():
            try:
                async for msg in self._one_connection():
                    yield msg
            except (httpx.HTTPError, ValueError) as exc:
                if self._on_error is not None:
                    self._on_error(exc)
            if self._closed.is_set():
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closed.wait(), self._retry)

    async def _one_connection(self) -> AsyncIterator[SseMessage]:
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
        if self._last_id is not None:
            headers["Last-Event-ID"] = self._last_id
        timeout = httpx.Timeout(self._connect_timeout, read=None)
        async with self._client.stream(
            "GET", self._url, params=self._params, headers=headers, timeout=timeout
        ) as response:
            response.raise_for_status()
            self.connections += 1
            if self._on_connect is not None:
                await self._on_connect()
            framer = SseFramer()
            async for line in _lines(response):
                msg = framer.feed_line(line)
                if framer.retry_ms is not None:
                    self._retry = framer.retry_ms / 1000
                if msg is not None:
                    self._last_id = framer.last_id
                    yield msg
                if self._closed.is_set():
                    return


async def _lines(response: httpx.Response) -> AsyncIterator[str]:
    """Lines split on CRLF, LF or CR, as the event-stream grammar says."""
    buf = ""
    async for text in response.aiter_text():
        buf += text
        while True:
            cut = _first_break(buf)
            if cut is None:
                break
            end, nxt = cut
            if buf[end] == "\r" and end + 1 == len(buf):
                break  # a CR at the very end may be the first half of CRLF
            yield buf[:end]
            buf = buf[nxt:]
    if buf:
        yield buf.removesuffix("\r")


def _first_break(buf: str) -> tuple[int, int] | None:
    cr, lf = buf.find("\r"), buf.find("\n")
    if cr < 0 and lf < 0:
        return None
    if cr < 0 or (0 <= lf < cr):
        return lf, lf + 1
    if lf == cr + 1:
        return cr, cr + 2
    return cr, cr + 1
