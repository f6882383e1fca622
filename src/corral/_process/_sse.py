"""A Server-Sent Events client over httpx: frames ``text/event-stream`` and reconnects.

Only bytes and framing live here (no JSON, no vendor types). :func:`parse_sse_lines` is the pure
framer (WHATWG rules: ``data:`` lines joined with ``\\n``, ``event:``, ``id:``, ``retry:``, comment
lines starting with ``:`` ignored, a blank line dispatches). :class:`SseClient` opens the stream,
yields :class:`SseMessage` values, and when the connection drops it reconnects after ``retry``
seconds (sending ``Last-Event-ID`` when the server gave ids) until :meth:`SseClient.close`.

An event over :data:`MAX_EVENT_BYTES` (one 100 MB ``data:`` line, or many lines adding up) is
dropped as it streams — memory stays bounded by the limit, the connection stays open, the events
after it arrive — and reported to ``on_error`` as an :class:`OverlongEvent`.

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

TYPE_CHECKING = False  # ``typing`` itself costs start-up (decision 036)

if TYPE_CHECKING:  # httpx loads when a stream connects: after the server is spawned (decision 039)
    import httpx

MAX_EVENT_BYTES = 32 * 1024 * 1024
"""Largest single event accepted; a bigger one ends the connection (and is reconnected)."""


@dataclass(frozen=True)
class SseMessage:
    """One dispatched event."""

    data: str
    event: str = "message"
    id: str | None = None


class OverlongEvent(ValueError):
    """An event (or one of its lines) over :data:`MAX_EVENT_BYTES`: it was dropped unread."""

    def __init__(self, size: int, limit: int = MAX_EVENT_BYTES) -> None:
        super().__init__(f"dropped an SSE event of {size} or more characters (limit {limit})")
        self.size = size
        self.limit = limit


class SseFramer:
    """Incremental WHATWG event-stream framer: feed lines (without their terminator), get messages."""

    def __init__(self) -> None:
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None
        self._size = 0
        self._skip = False
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
            if self._skip:
                return None
            self._size += len(value)
            if self._size > MAX_EVENT_BYTES:
                size = self._size
                self.drop()
                raise OverlongEvent(size)
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry" and value.isdigit():
            self.retry_ms = int(value)
        return None

    def drop(self) -> None:
        """Discard the event being built, and the rest of it up to its blank line."""
        self._data, self._size, self._skip = [], 0, True

    def _dispatch(self) -> SseMessage | None:
        self._skip = False
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
        import httpx

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

    def _report(self, exc: BaseException) -> None:
        if self._on_error is not None:
            self._on_error(exc)

    async def _one_connection(self) -> AsyncIterator[SseMessage]:
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
        if self._last_id is not None:
            headers["Last-Event-ID"] = self._last_id
        import httpx

        timeout = httpx.Timeout(self._connect_timeout, read=None)
        async with self._client.stream(
            "GET", self._url, params=self._params, headers=headers, timeout=timeout
        ) as response:
            response.raise_for_status()
            self.connections += 1
            if self._on_connect is not None:
                await self._on_connect()
            framer = SseFramer()
            async for line in _lines(response, MAX_EVENT_BYTES):
                if isinstance(line, _Overlong):
                    framer.drop()
                    self._report(OverlongEvent(line.size))
                    continue
                try:
                    msg = framer.feed_line(line)
                except OverlongEvent as exc:
                    self._report(exc)
                    continue
                if framer.retry_ms is not None:
                    self._retry = framer.retry_ms / 1000
                if msg is not None:
                    self._last_id = framer.last_id
                    yield msg
                if self._closed.is_set():
                    return


@dataclass(frozen=True)
class _Overlong:
    """A line longer than the limit, discarded as it streamed (``size`` characters)."""

    size: int


async def _lines(response: httpx.Response, limit: int) -> AsyncIterator[str | _Overlong]:
    """Lines split on CRLF, LF or CR, as the event-stream grammar says.

    Memory is bounded by ``limit``: a longer line is discarded while it streams and comes out as
    an :class:`_Overlong`. Each chunk is scanned once (a long line does not make this quadratic).
    """
    async for item in _split_lines(response.aiter_text(), limit):
        yield item


async def _split_lines(chunks: AsyncIterator[str], limit: int) -> AsyncIterator[str | _Overlong]:
    parts: list[str] = []
    size = 0
    skipping = False
    after_cr = False  # the last chunk ended in CR: a LF opening the next one belongs to it
    async for text in chunks:
        start = 1 if after_cr and text.startswith("\n") else 0
        after_cr = False
        for end, nxt in _breaks(text, start):
            size += end - start
            if skipping or size > limit:
                yield _Overlong(size)
            else:
                parts.append(text[start:end])
                yield "".join(parts)
            parts, size, skipping = [], 0, False
            after_cr = text[end] == "\r" and nxt == end + 1 == len(text)
            start = nxt
        if start < len(text):
            size += len(text) - start
            if size > limit:
                skipping, parts = True, []
            elif not skipping:
                parts.append(text[start:])
    if skipping:
        yield _Overlong(size)
    elif parts:
        yield "".join(parts)


def _breaks(text: str, start: int) -> list[tuple[int, int]]:
    """(end, next) of every line break in ``text`` from ``start``: CRLF, LF or CR."""
    out: list[tuple[int, int]] = []
    n = len(text)
    cr, lf = text.find("\r", start), text.find("\n", start)
    while cr >= 0 or lf >= 0:
        if cr < 0 or (0 <= lf < cr):
            out.append((lf, lf + 1))
            start = lf + 1
        elif lf == cr + 1:
            out.append((cr, cr + 2))
            start = cr + 2
        else:
            out.append((cr, cr + 1))
            start = cr + 1
        if cr < start:
            cr = text.find("\r", start) if start < n else -1
        if lf < start:
            lf = text.find("\n", start) if start < n else -1
    return out
