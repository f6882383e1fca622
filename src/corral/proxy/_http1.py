"""The proxy's upstream HTTP/1.1 client: asyncio protocols, the httptools parser, a keep-alive pool.

Why not httpx: under load the proxy spent about two thirds of its CPU inside httpx, httpcore and
anyio (pool bookkeeping, socket-attribute look-ups, model objects) for what is one request and one
response on a kept-alive socket (decision 037). This client does only that:

- ``send(method, url, headers, content)`` writes the request in one ``write`` and returns once the
  status line and headers are parsed; ``aiter_raw()`` yields the body as it arrives (chunked
  transfer decoded; ``gzip``/``deflate`` decoded although the request never asks for them), and
  ``aclose()`` hands the connection back to the pool when the body was read to its end and both
  sides allow keep-alive, else closes it. A body not read to its end (a cancelled stream) closes
  its connection, which is how the upstream learns the client went away.
- Every wait is bounded: ``connect`` for opening a connection, ``read`` for each wait on the
  upstream (headers or the next piece of body); past it :class:`UpstreamTimeout`. Anything else
  that goes wrong on the wire is :class:`UpstreamError` (never an exception of the parser's).
- A kept-alive connection that the upstream closed just as it was reused (no byte of answer
  read) is retried once on a fresh connection, as browsers and httpcore do.
- ``busy`` counts connections lent out, ``idle`` those kept; the fault tests check that ``busy``
  returns to 0. Header values with CR, LF or NUL are refused (no header injection).
"""

from __future__ import annotations

import asyncio
import ssl
import zlib
from collections import deque
from collections.abc import AsyncIterator, Mapping
from urllib.parse import urlsplit

import httptools

_MAX_HEADERS = 256 * 1024
_HIGH_WATER = 1024 * 1024
_BAD_HEADER = frozenset("\r\n\0")


class UpstreamError(Exception):
    """The upstream could not be reached, or broke the HTTP exchange."""


class UpstreamTimeout(UpstreamError):
    """A bounded wait on the upstream ran out."""


class _Stale(Exception):
    """A reused connection closed before any byte of the answer (retried once)."""


class _Connection(asyncio.Protocol):
    """One socket; one exchange at a time. Parser callbacks fill the current response."""

    def __init__(self, key: tuple[str, str, int]) -> None:
        self.key = key
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.reused = False
        self._reset()

    def _reset(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.status = 0
        self.headers: dict[str, str] = {}
        self.header_bytes = 0
        self.headers_done = False
        self.interim = False
        self.complete = False
        self.received = False
        self.until_eof = False
        self.keep_alive = True
        self.error: Exception | None = None
        self.body: deque[bytes] = deque()
        self.buffered = 0
        self.paused = False
        self.waiter: asyncio.Future[None] | None = None

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # a uvloop transport is no subclass

    def data_received(self, data: bytes) -> None:
        self.received = True
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(UpstreamError("the upstream switched protocols"))
        except httptools.HttpParserError as exc:
            self._fail(UpstreamError(f"the upstream sent invalid HTTP: {exc}"))
        if self.buffered > _HIGH_WATER and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()

    def eof_received(self) -> bool | None:
        return None  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.complete or self.error is not None:
            self._wake()
            return
        if self.headers_done and self.until_eof:
            self.complete = True  # a body delimited by the end of the connection
            self.keep_alive = False
        elif not self.received and self.reused:
            self.error = _Stale()
        else:
            detail = f": {exc!r}" if exc else ""
            self.error = UpstreamError(f"the upstream closed the connection{detail}")
        self._wake()

    # httptools callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        self.header_bytes += len(name) + len(value)
        if self.header_bytes > _MAX_HEADERS:
            raise httptools.HttpParserError("the upstream's headers are too large")
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        self.headers[key] = f"{self.headers[key]}, {text}" if key in self.headers else text

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        if 100 <= self.status < 200 and self.status != 101:
            # 100 Continue, 103 Early Hints: an interim answer; the real one follows.
            self.interim = True
            self.headers = {}
            return
        self.keep_alive = self.parser.should_keep_alive()
        chunked = "chunked" in self.headers.get("transfer-encoding", "").lower()
        no_body = self.status in (204, 304)
        self.until_eof = not chunked and "content-length" not in self.headers and not no_body
        self.headers_done = True
        self._wake()

    def on_body(self, body: bytes) -> None:
        self.body.append(bytes(body))
        self.buffered += len(body)
        self._wake()

    def on_message_complete(self) -> None:
        if self.interim:
            self.interim = False
            return
        self.complete = True
        self._wake()

    # the client side
    def _fail(self, error: Exception) -> None:
        self.error = error
        self.keep_alive = False
        if self.transport is not None:
            self.transport.close()
        self._wake()

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self, timeout: float) -> None:
        """Until the parser has something new (or the connection ended), at most ``timeout``."""
        loop = asyncio.get_running_loop()
        waiter = self.waiter = loop.create_future()
        timer = loop.call_later(timeout, _expire, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            self.waiter = None

    def take(self) -> bytes:
        data = self.body.popleft() if len(self.body) == 1 else b"".join(self.body)
        self.body.clear()
        self.buffered = 0
        if self.paused and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()
        return data

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


def _tls_context() -> ssl.SSLContext:
    """Verified TLS with certifi's roots when installed (as httpx had), else the system's."""
    try:
        import certifi
    except ImportError:
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=certifi.where())


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(UpstreamTimeout("the upstream did not answer in time"))


class Response:
    """One upstream answer: ``status``, ``headers`` (lower-case names), the body, ``aclose()``."""

    def __init__(self, pool: Pool, conn: _Connection) -> None:
        self._pool = pool
        self._conn: _Connection | None = conn
        self.status_code = conn.status
        self.headers: Mapping[str, str] = conn.headers
        encoding = conn.headers.get("content-encoding", "").strip().lower()
        self._inflate = (
            zlib.decompressobj(47 if encoding == "gzip" else zlib.MAX_WBITS)
            if encoding in ("gzip", "deflate")
            else None
        )

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        """The body, piece by piece as it arrives (decoded from chunks and compression)."""
        conn = self._conn
        if conn is None:
            return
        while True:
            if conn.body:
                data = conn.take()
                if self._inflate is not None:
                    try:
                        data = self._inflate.decompress(data)
                    except zlib.error as exc:
                        raise UpstreamError(
                            f"the upstream's compressed body is bad: {exc}"
                        ) from None
                if data:
                    yield data
                continue
            if conn.error is not None:
                raise (
                    conn.error
                    if not isinstance(conn.error, _Stale)
                    else UpstreamError("the upstream closed the connection")
                )
            if conn.complete:
                return
            await conn.wait(self._pool.read_timeout)

    async def aread(self, limit: int) -> bytes:
        """The whole body, or its first ``limit`` bytes and more."""
        parts: list[bytes] = []
        size = 0
        async for data in self.aiter_raw():
            parts.append(data)
            size += len(data)
            if size > limit:
                break
        return b"".join(parts)

    async def aclose(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            self._pool.release(conn)


class Pool:
    """Kept-alive upstream connections by (scheme, host, port); see the module docstring."""

    def __init__(
        self,
        *,
        connect_timeout: float,
        read_timeout: float,
        max_connections: int = 512,
        max_idle: int = 128,
    ) -> None:
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.max_idle = max_idle
        self._slots = asyncio.Semaphore(max_connections)
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._busy: set[_Connection] = set()
        self._ssl: ssl.SSLContext | None = None

    @property
    def busy(self) -> int:
        return len(self._busy)

    @property
    def idle(self) -> int:
        return sum(len(conns) for conns in self._idle.values())

    async def send(
        self, method: str, url: str, headers: Mapping[str, str], content: bytes
    ) -> Response:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or not parts.hostname:
            raise UpstreamError(f"cannot send to {url!r}")
        port = parts.port or (443 if scheme == "https" else 80)
        key = (scheme, parts.hostname, port)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        head = [f"{method} {target} HTTP/1.1\r\nhost: {parts.netloc.rpartition('@')[2]}\r\n"]
        for name, value in headers.items():
            if not _BAD_HEADER.isdisjoint(name) or not _BAD_HEADER.isdisjoint(value):
                raise UpstreamError(f"header {name!r} has a line break or NUL")
            if name.lower() not in ("host", "content-length", "transfer-encoding", "connection"):
                head.append(f"{name}: {value}\r\n")
        head.append(f"content-length: {len(content)}\r\n\r\n")
        payload = "".join(head).encode("latin-1", "replace") + content
        await self._slots.acquire()
        try:
            try:
                return await self._exchange(key, payload, reuse=True)
            except _Stale:
                return await self._exchange(key, payload, reuse=False)
        except BaseException:
            self._slots.release()
            raise

    async def _exchange(self, key: tuple[str, str, int], payload: bytes, reuse: bool) -> Response:
        conn = self._checkout(key) if reuse else None
        if conn is None:
            conn = await self._connect(key)
        self._busy.add(conn)
        try:
            assert conn.transport is not None
            conn.transport.write(payload)
            while not conn.headers_done:
                if conn.error is not None:
                    raise conn.error
                if conn.closed:
                    raise UpstreamError("the upstream closed the connection")
                await conn.wait(self.read_timeout)
        except BaseException:
            self._busy.discard(conn)
            conn.close()
            raise
        return Response(self, conn)

    def _checkout(self, key: tuple[str, str, int]) -> _Connection | None:
        conns = self._idle.get(key)
        while conns:
            conn = conns.pop()
            if not conn.closed and conn.transport is not None and not conn.transport.is_closing():
                conn._reset()
                conn.reused = True
                return conn
        return None

    async def _connect(self, key: tuple[str, str, int]) -> _Connection:
        scheme, host, port = key
        context: ssl.SSLContext | None = None
        if scheme == "https":
            if self._ssl is None:
                self._ssl = _tls_context()
            context = self._ssl
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.connect_timeout):
                _, conn = await loop.create_connection(
                    lambda: _Connection(key), host, port, ssl=context
                )
        except TimeoutError:
            raise UpstreamTimeout(f"cannot connect to {host}:{port} in time") from None
        except (OSError, ssl.SSLError) as exc:
            raise UpstreamError(f"cannot reach {host}:{port}: {exc!r}") from None
        return conn

    def release(self, conn: _Connection) -> None:
        """Back to the pool when its exchange ended cleanly, else closed."""
        if conn not in self._busy:
            return
        self._busy.discard(conn)
        self._slots.release()
        reusable = conn.complete and conn.keep_alive and conn.error is None and not conn.closed
        idle = self._idle.setdefault(conn.key, [])
        if reusable and len(idle) < self.max_idle:
            idle.append(conn)
        else:
            conn.close()

    async def aclose(self) -> None:
        for conns in self._idle.values():
            for conn in conns:
                conn.close()
        self._idle.clear()
        for conn in list(self._busy):
            conn.close()
        self._busy.clear()
