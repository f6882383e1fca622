"""The proxy's upstream HTTP/1.1 client against raw asyncio servers that answer with scripted
bytes: body framings, keep-alive reuse, a stale kept-alive connection, timeouts, broken HTTP,
header injection, and ``busy`` back to 0 after every exchange."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest

from corral.proxy._http1 import Pool, UpstreamError, UpstreamTimeout

Answer = Callable[[bytes], bytes | None]
"""The bytes to answer one request with (None: close the connection without an answer)."""


class Server:
    def __init__(self, answers: list[Answer]) -> None:
        self.answers = answers
        self.connections = 0
        self.requests: list[bytes] = []
        self.server: asyncio.Server | None = None

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while self.answers:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                request = head + await reader.readexactly(length)
                self.requests.append(request)
                reply = self.answers.pop(0)(request)
                if reply is None:
                    break
                writer.write(reply)
                await writer.drain()
                if b"connection: close" in reply.lower():
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()
            await writer.wait_closed()

    @property
    def url(self) -> str:
        assert self.server is not None
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"


@asynccontextmanager
async def serving(*answers: Answer) -> AsyncIterator[Server]:
    server = Server(list(answers))
    server.server = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    async with server.server:
        yield server


def reply(body: bytes, *headers: str, status: str = "200 OK") -> Answer:
    head = f"HTTP/1.1 {status}\r\n" + "".join(h + "\r\n" for h in headers)
    return lambda _request: head.encode() + b"\r\n" + body


def sized(body: bytes, *headers: str, status: str = "200 OK") -> Answer:
    return reply(body, f"content-length: {len(body)}", *headers, status=status)


def pool(read_timeout: float = 5.0) -> Pool:
    return Pool(connect_timeout=5.0, read_timeout=read_timeout)


async def fetch(p: Pool, url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    response = await p.send("POST", url + "/v1/x?q=1", headers or {}, b'{"a":1}')
    try:
        return response.status_code, await response.aread(1 << 20)
    finally:
        await response.aclose()


async def test_content_length_bodies_reuse_one_connection_and_the_request_is_framed() -> None:
    async with serving(sized(b"one"), sized(b"two", "x-thing: 1")) as server:
        p = pool()
        assert await fetch(p, server.url, {"authorization": "Bearer k"}) == (200, b"one")
        assert await fetch(p, server.url) == (200, b"two")
        assert server.connections == 1
        assert p.busy == 0 and p.idle == 1
        first = server.requests[0]
        assert first.startswith(b"POST /v1/x?q=1 HTTP/1.1\r\n")
        assert b"\r\nauthorization: Bearer k\r\n" in first
        assert b"\r\ncontent-length: 7\r\n\r\n" in first and first.endswith(b'{"a":1}')
        await p.aclose()


async def test_chunked_body_is_decoded_and_streamed_piece_by_piece() -> None:
    chunked = b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
    async with serving(reply(chunked, "transfer-encoding: chunked")) as server:
        p = pool()
        response = await p.send("POST", server.url, {}, b"")
        pieces = [piece async for piece in response.aiter_raw()]
        await response.aclose()
        assert b"".join(pieces) == b"hello world"
        assert p.busy == 0 and p.idle == 1
        await p.aclose()


async def test_a_body_ended_by_closing_the_connection_is_complete_and_not_kept() -> None:
    async with serving(reply(b"until the end", "connection: close")) as server:
        p = pool()
        assert await fetch(p, server.url) == (200, b"until the end")
        assert p.busy == 0 and p.idle == 0
        await p.aclose()


async def test_an_interim_answer_is_skipped() -> None:
    early = b"HTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\n"
    async with serving(lambda r: early + sized(b"real")(r)) as server:  # type: ignore[operator]
        p = pool()
        response = await p.send("POST", server.url, {}, b"")
        assert response.status_code == 200 and "link" not in response.headers
        assert await response.aread(100) == b"real"
        await response.aclose()
        assert p.idle == 1
        await p.aclose()


async def test_gzip_bodies_are_decoded() -> None:
    body = gzip.compress(b'{"ok": true}')
    async with serving(sized(body, "content-encoding: gzip")) as server:
        p = pool()
        assert await fetch(p, server.url) == (200, b'{"ok": true}')
        await p.aclose()


async def test_error_statuses_and_headers_come_through() -> None:
    answer = sized(b'{"error":{}}', "retry-after: 3", "Retry-After-Ms: 3000", status="429 Slow")
    async with serving(answer) as server:
        p = pool()
        response = await p.send("POST", server.url, {}, b"")
        assert response.status_code == 429
        assert response.headers["retry-after"] == "3"
        assert response.headers["retry-after-ms"] == "3000"
        await response.aclose()
        await p.aclose()


async def test_a_kept_alive_connection_closed_by_the_upstream_is_retried_once_fresh() -> None:
    async with serving(sized(b"first"), lambda _r: None, sized(b"second")) as server:
        p = pool()
        assert await fetch(p, server.url) == (200, b"first")
        # the server closes the kept-alive socket without answering; the client retries fresh
        assert await fetch(p, server.url) == (200, b"second")
        assert server.connections == 2
        assert p.busy == 0
        await p.aclose()


async def test_a_fresh_connection_closed_without_an_answer_is_an_error() -> None:
    async with serving(lambda _r: None) as server:
        p = pool()
        with pytest.raises(UpstreamError, match="closed"):
            await p.send("POST", server.url, {}, b"")
        assert p.busy == 0
        await p.aclose()


async def test_a_body_cut_short_is_an_error_and_the_connection_is_dropped() -> None:
    async with serving(reply(b"part", "content-length: 100", "connection: close")) as server:
        p = pool()
        response = await p.send("POST", server.url, {}, b"")
        with pytest.raises(UpstreamError):
            await response.aread(1 << 20)
        await response.aclose()
        assert p.busy == 0 and p.idle == 0
        await p.aclose()


async def test_no_answer_within_the_read_timeout() -> None:
    done = asyncio.Event()

    async def hang(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1 << 16)
        await done.wait()
        writer.close()
        await writer.wait_closed()

    server = await asyncio.start_server(hang, "127.0.0.1", 0)
    async with server:
        port = server.sockets[0].getsockname()[1]
        p = pool(read_timeout=0.2)
        with pytest.raises(UpstreamTimeout):
            await p.send("POST", f"http://127.0.0.1:{port}", {}, b"")
        assert p.busy == 0
        await p.aclose()
        done.set()
        await asyncio.sleep(0.05)


async def test_nothing_listening_is_an_error() -> None:
    sock_server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = sock_server.sockets[0].getsockname()[1]
    sock_server.close()
    await sock_server.wait_closed()
    p = pool()
    with pytest.raises(UpstreamError, match="cannot reach"):
        await p.send("POST", f"http://127.0.0.1:{port}", {}, b"")
    await p.aclose()


async def test_garbage_instead_of_http_is_an_error() -> None:
    async with serving(lambda _r: b"SSH-2.0-OpenSSH\r\n\r\n") as server:
        p = pool()
        with pytest.raises(UpstreamError, match="invalid HTTP"):
            await p.send("POST", server.url, {}, b"")
        assert p.busy == 0
        await p.aclose()


@pytest.mark.parametrize("value", ["a\r\nx-injected: 1", "a\nb", "a\0b"])
async def test_header_values_with_line_breaks_are_refused(value: str) -> None:
    p = pool()
    with pytest.raises(UpstreamError, match="line break"):
        await p.send("POST", "http://127.0.0.1:9", {"anthropic-beta": value}, b"")
    assert p.busy == 0
    await p.aclose()


async def test_a_stream_closed_before_its_end_drops_its_connection() -> None:
    chunked = b"5\r\nhello\r\n"  # and never the rest
    async with serving(reply(chunked, "transfer-encoding: chunked")) as server:
        p = pool()
        response = await p.send("POST", server.url, {}, b"")
        async for piece in response.aiter_raw():
            assert piece == b"hello"
            break
        await response.aclose()
        assert p.busy == 0 and p.idle == 0
        await p.aclose()


async def test_only_http_urls() -> None:
    p = pool()
    with pytest.raises(UpstreamError, match="cannot send"):
        await p.send("POST", "ftp://127.0.0.1/x", {}, b"")
    await p.aclose()
