"""A child process serving HTTP on loopback, and the client that talks to it — nothing vendor-specific.

:class:`ServerTransport` is the live :class:`~corral._process.HttpTransport`. The process is a
:class:`~corral._process.ProcessTransport` (its own process group, the parent-death signal, killed
at exit, stopped with SIGTERM, a grace period, then SIGKILL — SIGINT does not always stop a server —
and the descendants that left its group with it); its stdout is drained into a bounded tail. On
top: requests with basic auth, and an SSE stream read through
:class:`~corral._process._sse.SseClient`. What it taps is described in :mod:`corral._process._http`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._redact import redact
from ..errors import ProcessError
from ._transport import Direction, OverlongLine, ProcessTransport, Tap

if TYPE_CHECKING:  # httpx is imported when a server starts, not by every line driver
    import httpx

    from ._sse import SseClient

REQUEST_TIMEOUT = 30.0
"""Seconds one request may take unless the caller says otherwise."""


@dataclass(frozen=True)
class HttpReply:
    """The answer to one request: the status and the body (decoded JSON, else text, else None)."""

    status: int
    payload: Any


class RequestFailed(ProcessError):
    """No answer came (connection refused or dropped, timeout): the exchange has no status.
    ``timed_out``: the request went out and its time ran out (not refused, not dropped)."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


_TAIL_LINES = 200
_TAIL_CHARS = 8000


class _InOrder:
    """Taps exchanges in the order their requests were made (see :mod:`corral._process._http`)."""

    def __init__(self, tap: Tap | None) -> None:
        self.tap = tap
        self._queue: deque[list[Any]] = deque()

    def open(self) -> list[Any]:
        slot: list[Any] = ["in", None]
        if self.tap is not None:
            self._queue.append(slot)
        return slot

    def fill(self, slot: list[Any], exchange: Mapping[str, Any]) -> None:
        slot[1] = json.dumps(exchange, ensure_ascii=False).encode()
        self._flush()

    def add(self, direction: Direction, raw: bytes) -> None:
        if self.tap is None:
            return
        self._queue.append([direction, raw])
        self._flush()

    def _flush(self) -> None:
        while self._queue and self._queue[0][1] is not None:
            direction, raw = self._queue.popleft()
            if self.tap is not None:
                with contextlib.suppress(Exception):
                    self.tap(direction, raw)


class ServerTransport:
    """One server process and a client for it. ``start()``, ``request()`` / ``events()``, ``kill()``."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        url: str,
        auth: tuple[str, str] | None = None,
        tap: Tap | None = None,
    ) -> None:
        self.process = ProcessTransport(argv, env=env, cwd=cwd)
        self.argv = self.process.argv
        self.url = url
        self.auth = auth
        self._log = _InOrder(tap)
        self._output: deque[bytes] = deque(maxlen=_TAIL_LINES)
        self._printed = 0  # lines of output read so far (the tail keeps the last _TAIL_LINES)
        self._output_ended = False
        self._new_output = asyncio.Event()
        self._drain: asyncio.Task[None] | None = None
        self._client: httpx.AsyncClient | None = None
        self._sse: SseClient | None = None
        self._exit_noted = False

    @property
    def killed_by_us(self) -> bool:
        return self.process.killed_by_us

    @property
    def pid(self) -> int | None:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    @property
    def stderr_tail(self) -> str:
        """The server's last output: its stdout, then its stderr, with secrets redacted."""
        out = b"\n".join(self._output).decode("utf-8", errors="replace")
        text = "\n".join(t for t in (out, self.process.stderr_tail) if t)
        return redact(text[-_TAIL_CHARS:], self.process.env)

    async def start(self) -> None:
        await self.process.start()
        self._drain = asyncio.create_task(self._drain_output(), name="server-output")
        import httpx

        auth = httpx.BasicAuth(*self.auth) if self.auth is not None else None
        self._client = httpx.AsyncClient(auth=auth, timeout=REQUEST_TIMEOUT)

    async def _drain_output(self) -> None:
        try:
            async for line in self.process.lines():
                self._output.append(line.head if isinstance(line, OverlongLine) else line)
                self._printed += 1
                self._new_output.set()
        finally:
            self._output_ended = True
            self._new_output.set()

    async def printed(self, marker: bytes, timeout: float) -> bool:
        """See :meth:`corral._process.HttpTransport.printed`."""

        async def seek() -> bool:
            checked = self._printed - len(self._output)  # lines gone from the tail are not seen
            while True:
                new = self._printed - checked
                if new and any(marker in line for line in list(self._output)[-new:]):
                    return True
                checked = self._printed
                if self._output_ended:
                    return False
                self._new_output.clear()  # no await since the check: no line slips between
                await self._new_output.wait()

        try:
            return await asyncio.wait_for(seek(), timeout)
        except TimeoutError:
            return False

    # ── requests ──
    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: Any = None,
        timeout: float = REQUEST_TIMEOUT,
    ) -> HttpReply:
        if self._client is None:
            raise RequestFailed("the server was not started")
        import httpx

        slot = self._log.open()
        exchange: dict[str, Any] = {"method": method, "path": path, "body": body}
        try:
            resp = await asyncio.wait_for(
                self._client.request(
                    method, self.url + path, params=params, json=body, timeout=timeout
                ),
                timeout + 0.5,
            )
        except (httpx.HTTPError, TimeoutError) as exc:
            self._log.fill(slot, {**exchange, "error": type(exc).__name__})
            timed_out = isinstance(exc, TimeoutError | httpx.TimeoutException)
            raise RequestFailed(f"{method} {path}: {exc!r}", timed_out=timed_out) from exc
        except BaseException:
            self._log.fill(slot, {**exchange, "error": "cancelled"})
            raise
        try:
            payload = resp.json() if resp.content else None
        except ValueError:
            payload = resp.text
        self._log.fill(slot, {**exchange, "status": resp.status_code, "response": payload})
        return HttpReply(resp.status_code, payload)

    async def events(
        self,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        on_connect: Callable[[], Awaitable[None]] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> AsyncIterator[str]:
        if self._client is None:
            raise RequestFailed("the server was not started")
        from ._sse import SseClient

        self._sse = SseClient(
            self._client,
            self.url + path,
            params=params,
            on_connect=on_connect,
            on_error=on_error,
        )
        async for msg in self._sse:
            self._log.add("out", msg.data.encode())
            yield msg.data

    def close_events(self) -> None:
        if self._sse is not None:
            self._sse.close()

    # ── ending ──
    async def wait(self) -> int:
        code = await self.process.wait()
        await self._finish_drain()
        self._note_exit()
        return code

    async def kill(self, grace: float = 3.0) -> int | None:
        """SIGTERM the process group, wait ``grace``, then SIGKILL. Idempotent."""
        code = await self.process.kill(grace)
        await self._finish_drain()
        self._note_exit()
        return code

    def signal_group(self, sig: signal.Signals) -> None:
        self.process.signal_group(sig)

    async def aclose(self) -> None:
        self.close_events()
        if self._client is not None:
            await self._client.aclose()

    def _note_exit(self) -> None:
        code = self.process.returncode
        if not self._exit_noted and code is not None:
            self._exit_noted = True
            self._log.add("exit", str(code).encode())

    async def _finish_drain(self) -> None:
        """Read what the process printed last (bounded: a grandchild may hold the pipe open)."""
        if self._drain is None or self._drain.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(self._drain), 1.0)
        except (TimeoutError, Exception):
            self._drain.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._drain
