"""A small JSON-RPC 2.0 client over a line transport (one JSON object per line).

What it does, and nothing else:

* ``request(method, params, timeout=)`` sends ``{"id", "method", "params"}`` and awaits the matching
  response; an error response raises :class:`~corral.errors.JsonRpcError`, silence raises
  :class:`~corral.errors.RequestTimeout`.
* ``notify(method, params)`` sends a notification (no id).
* Incoming notifications go to ``on_notification(method, params)``.
* Incoming requests (the peer asking *us*, e.g. for a permission) go to ``on_request(method, params)``
  whose return value is sent back as ``result``; raising ``JsonRpcError`` sends that error; a method
  with no handler (``on_request`` returns :data:`METHOD_NOT_FOUND`) gets ``-32601``.
* Anything that is not JSON-RPC (a bare JSON value, garbage, an overlong line) goes to ``on_other``.
* Nothing the peer writes ends the read loop: a line that is not JSON (see
  :func:`~corral._process._decode.loads`), an ``id`` that is not a string or a number, or a
  handler that raises goes to ``on_other`` (a raising handler is logged too).
* When the peer's stdout ends, every pending request fails with a ProcessError carrying the exit
  code and stderr tail.

Some peers (Codex app-server) omit the ``"jsonrpc": "2.0"`` member; ``jsonrpc_field=False`` does the
same on the way out, and incoming messages are accepted with or without it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from ..errors import JsonRpcError, ProcessError
from ._correlate import Correlator
from ._decode import BadJson, loads
from ._line import LineTransport
from ._transport import OverlongLine

METHOD_NOT_FOUND: Any = object()
"""Returned by an ``on_request`` handler that does not know the method."""

RequestHandler = Callable[[str, Any], Awaitable[Any]]
NotificationHandler = Callable[[str, Any], None]
OtherHandler = Callable[["bytes | OverlongLine"], None]

_encoder = msgspec.json.Encoder()
_ID_TYPES = (int, str)
log = logging.getLogger("corral.jsonrpc")


async def _no_requests(method: str, params: Any) -> Any:
    return METHOD_NOT_FOUND


class JsonRpcClient:
    def __init__(
        self,
        transport: LineTransport,
        *,
        on_request: RequestHandler | None = None,
        on_notification: NotificationHandler | None = None,
        on_other: OtherHandler | None = None,
        jsonrpc_field: bool = True,
        default_timeout: float = 60.0,
    ) -> None:
        self.transport = transport
        self.on_request = on_request or _no_requests
        self.on_notification = on_notification or (lambda method, params: None)
        self.on_other = on_other or (lambda line: None)
        self.jsonrpc_field = jsonrpc_field
        self.default_timeout = default_timeout
        self._calls: Correlator[int] = Correlator(int)
        self._handlers: set[asyncio.Task[None]] = set()
        self._reader: asyncio.Task[None] | None = None
        self._closed_error: BaseException | None = None
        self.eof = asyncio.Event()

    # ── lifecycle ──
    def start(self) -> None:
        """Start reading; the transport must already be started."""
        if self._reader is None:
            self._reader = asyncio.create_task(self._read_loop(), name="jsonrpc-reader")

    async def close(self, grace: float = 3.0) -> int | None:
        """Close stdin, give the peer ``grace`` seconds to exit, then kill it; stop all tasks."""
        await self.transport.close_stdin()
        try:
            await asyncio.wait_for(self.eof.wait(), grace)
            code: int | None = await self.transport.wait(grace)
        except TimeoutError:
            code = await self.transport.kill(grace)
        await self._stop_tasks()
        return code

    async def _stop_tasks(self) -> None:
        tasks = [t for t in (*self._handlers, self._reader) if t is not None and not t.done()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._fail_pending(ProcessError("JSON-RPC client closed"))

    async def __aenter__(self) -> JsonRpcClient:
        self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ── outgoing ──
    async def request(
        self, method: str, params: Any = None, *, timeout: float | None = None
    ) -> Any:
        if self._closed_error is not None:
            raise ProcessError(f"cannot send {method!r}: {self._closed_error}")

        async def send(req_id: int) -> None:
            msg: dict[str, Any] = {"id": req_id, "method": method}
            if params is not None:
                msg["params"] = params
            await self._send(msg)

        limit = self.default_timeout if timeout is None else timeout
        return await self._calls.call(send, timeout=limit, what=method)

    async def notify(self, method: str, params: Any = None) -> None:
        msg: dict[str, Any] = {"method": method}
        if params is not None:
            msg["params"] = params
        await self._send(msg)

    async def _send(self, msg: dict[str, Any]) -> None:
        if self.jsonrpc_field:
            msg = {"jsonrpc": "2.0", **msg}
        await self.transport.write_line(_encoder.encode(msg))

    # ── incoming ──
    async def _read_loop(self) -> None:
        try:
            async for line in self.transport.lines():
                if isinstance(line, OverlongLine):
                    self.on_other(line)
                    continue
                try:
                    msg = loads(line)
                except BadJson:
                    self.on_other(line)
                    continue
                if not isinstance(msg, dict):
                    self.on_other(line)
                    continue
                try:
                    self._dispatch(msg, line)
                except Exception as exc:  # a handler's bug must not end the read loop
                    log.warning("a JSON-RPC message could not be handled: %r", exc)
                    log.debug("the traceback", exc_info=exc)
                    with contextlib.suppress(Exception):
                        self.on_other(line)
        finally:
            code = self.transport.returncode
            self._closed_error = ProcessError(
                "agent closed its output", code, self.transport.stderr_tail
            )
            self._fail_pending(self._closed_error)
            self.eof.set()

    def _dispatch(self, msg: dict[str, Any], line: bytes) -> None:
        method = msg.get("method")
        msg_id = msg.get("id")
        if msg_id is not None and (type(msg_id) not in _ID_TYPES):
            # JSON-RPC ids are strings or numbers; a float, list or object matches nothing we sent.
            self.on_other(line)
            return
        if isinstance(method, str):
            if msg_id is None:
                self.on_notification(method, msg.get("params"))
            else:
                task = asyncio.create_task(self._answer(msg_id, method, msg.get("params")))
                self._handlers.add(task)
                task.add_done_callback(self._handlers.discard)
            return
        if msg_id is not None and ("result" in msg or "error" in msg):
            if msg_id not in self._calls:
                self.on_other(line)
                return
            err = msg.get("error")
            if err is not None:
                if not isinstance(err, dict):
                    err = {"code": -32603, "message": str(err)}
                code = err.get("code")
                settled = self._calls.reject(
                    msg_id,
                    JsonRpcError(
                        code if type(code) is int else -32603,
                        str(err.get("message", "")),
                        err.get("data"),
                    ),
                )
            else:
                settled = self._calls.resolve(msg_id, msg.get("result"))
            if not settled:
                self.on_other(line)
            return
        self.on_other(line)

    async def _answer(self, msg_id: Any, method: str, params: Any) -> None:
        reply: dict[str, Any] = {"id": msg_id}
        try:
            result = await self.on_request(method, params)
        except JsonRpcError as exc:
            reply["error"] = _error_obj(exc.code, exc.rpc_message, exc.data)
        except Exception as exc:
            reply["error"] = _error_obj(-32603, f"internal error: {exc}")
        else:
            if result is METHOD_NOT_FOUND:
                reply["error"] = _error_obj(-32601, f"method not found: {method}")
            else:
                reply["result"] = result
        with contextlib.suppress(ProcessError):
            await self._send(reply)

    def _fail_pending(self, exc: BaseException) -> None:
        self._calls.fail_all(exc)


def _error_obj(code: int, message: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return err
