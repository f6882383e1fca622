"""The proxy's ASGI app: routes, its own bearer token, models listings, the request lifecycle.

A raw ASGI callable (no framework) because it sits on every model call's hot path. Paths are
matched on their suffix so every client's spelling works (``/v1/messages?beta=true``,
``/chat/completions`` with or without ``/v1``, ``/v1beta/models/{model}:method``). A request is
authenticated by the proxy's token in ``Authorization: Bearer``, ``x-api-key`` or
``x-goog-api-key`` (the forms the harnesses send); only ``GET /health`` is open.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import math
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from ..errors import ConfigError
from . import _ir as ir
from ._config import ProxySettings
from ._forward import Exchange, Proxy, UpstreamFailed
from ._http1 import Pool
from ._sse import encode, loads
from ._upstream import HttpxUpstream, Upstream
from ._usage import UsageLog, log_event
from ._wires import Converter, converter

if TYPE_CHECKING:
    import httpx

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

MAX_REQUEST_BODY = 32 * 1024 * 1024
_GOOGLE_CALL = re.compile(r"/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")
_JSON = [(b"content-type", b"application/json")]
_SSE = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]


class _Disconnected(Exception):
    pass


class ProxyApp:
    """``create_app(settings)`` returns one of these; uvicorn drives it (lifespan included)."""

    def __init__(self, settings: ProxySettings, client: httpx.AsyncClient | None = None) -> None:
        self.settings = settings
        self._client = client
        self.proxy: Proxy | None = None
        self._token = settings.token.encode()

    async def startup(self) -> None:
        if self.proxy is not None:
            return
        timeout = self.settings.profile.timeout
        upstream: Upstream
        if self._client is not None:
            upstream = HttpxUpstream(self._client)
        else:
            upstream = Pool(connect_timeout=min(timeout, 10.0), read_timeout=timeout)
        self.proxy = Proxy(self.settings, upstream, UsageLog(self.settings.usage_path()))

    async def shutdown(self) -> None:
        if self.proxy is None:
            return
        await self.proxy.client.aclose()
        self.proxy.usage.close()
        self.proxy = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        await self.startup()
        path: str = scope["path"].rstrip("/")
        method: str = scope["method"]
        if path == "/health" and method in ("GET", "HEAD"):
            await _json(send, 200, {"status": "ok"})
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        client_wire = _wire_of(path)
        conv = converter(client_wire)
        if not self._authorized(headers, scope.get("query_string", b"")):
            status, body = conv.render_error(ir.ErrorInfo("auth", "invalid proxy token", 401))
            await _json(send, status, body)
            return
        if method == "GET":
            await self._get(path, send)
            return
        if method != "POST":
            await _json(
                send, 405, {"error": {"message": f"{method} {path} is not served", "code": 405}}
            )
            return
        try:
            raw = await _body(receive)
        except _Disconnected:
            return
        except ValueError as exc:
            status, body = conv.render_error(ir.ErrorInfo("too_large", str(exc), 413))
            await _json(send, status, body)
            return
        await self._post(scope, path, headers, raw, receive, send)

    def _authorized(self, headers: dict[str, str], query: bytes) -> bool:
        candidates = [headers.get("x-api-key", ""), headers.get("x-goog-api-key", "")]
        auth = headers.get("authorization", "")
        if auth[:7].lower() == "bearer ":
            candidates.append(auth[7:].strip())
        if query:
            candidates += parse_qs(query.decode("latin-1")).get("key", [])
        return any(c and hmac.compare_digest(c.encode(), self._token) for c in candidates)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await self.startup()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _get(self, path: str, send: Send) -> None:
        if path.endswith("/responses"):
            # Codex tries a WebSocket first; a quick refusal makes it fall back to POST.
            await _json(
                send,
                405,
                {"error": {"message": "websockets are not served", "code": "upgrade_refused"}},
            )
            return
        if path.endswith("/models") or "/models/" in path:
            await _json(send, 200, self._models(path))
            return
        await _json(send, 404, {"error": {"message": f"no route for GET {path}", "code": 404}})

    def _models(self, path: str) -> dict[str, Any]:
        names = list(self.settings.models) or [self.settings.profile.model or "corral-proxy"]
        if path.startswith("/v1beta"):
            listing = [
                {
                    "name": f"models/{n}",
                    "displayName": n,
                    "supportedGenerationMethods": [
                        "generateContent",
                        "streamGenerateContent",
                        "countTokens",
                    ],
                }
                for n in names
            ]
            return listing[0] if "/models/" in path else {"models": listing}
        entries: list[dict[str, Any]] = [
            {
                "id": n,
                "object": "model",
                "created": 0,
                "owned_by": "corral-proxy",
                "type": "model",
                "display_name": n,
                "created_at": "2026-01-01T00:00:00Z",
            }
            for n in names
        ]
        if "/models/" in path:
            return entries[0]
        return {
            "object": "list",
            "data": entries,
            "has_more": False,
            "first_id": names[0],
            "last_id": names[-1],
        }

    async def _post(
        self,
        scope: Scope,
        path: str,
        headers: dict[str, str],
        raw: bytes,
        receive: Receive,
        send: Send,
    ) -> None:
        client_wire = _wire_of(path)
        conv = converter(client_wire)
        try:
            body = loads(raw)
            if not isinstance(body, dict):
                raise ValueError("the request body must be a JSON object")
        except ValueError as exc:
            status, err = conv.render_error(
                ir.ErrorInfo("bad_request", f"invalid JSON body: {exc}", 400)
            )
            await _json(send, status, err)
            return
        google = _GOOGLE_CALL.search(path)
        if path.endswith("/messages/count_tokens") or (
            google and google["method"] == "countTokens"
        ):
            tokens = math.ceil(len(raw) / 4)
            await _json(send, 200, {"totalTokens": tokens} if google else {"input_tokens": tokens})
            return
        model, stream, as_array = "", False, False
        if google is not None:
            if google["method"] not in ("generateContent", "streamGenerateContent"):
                await _json(
                    send,
                    404,
                    {
                        "error": {
                            "code": 404,
                            "message": f"{google['method']} is not served",
                            "status": "NOT_FOUND",
                        }
                    },
                )
                return
            model = google["model"]
            stream = google["method"] == "streamGenerateContent"
            as_array = stream and b"alt=sse" not in scope.get("query_string", b"")
        elif not any(path.endswith(s) for s in ("/messages", "/chat/completions", "/responses")):
            await _json(send, 404, {"error": {"message": f"no route for POST {path}", "code": 404}})
            return
        try:
            request = conv.parse_request(body, model, stream and not as_array)
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            status, err = conv.render_error(
                ir.ErrorInfo("bad_request", f"cannot read this request: {exc!r}", 400)
            )
            await _json(send, status, err)
            return
        assert self.proxy is not None
        try:
            exchange = Exchange(self.proxy, conv, request, headers)
        except ConfigError as exc:  # a profile that cannot serve this request
            status, err = conv.render_error(ir.ErrorInfo("bad_request", str(exc), 400))
            await _json(send, status, err)
            return
        await _guarded(exchange, conv, receive, send, as_array)


async def _guarded(
    exchange: Exchange, conv: Converter, receive: Receive, send: Send, as_array: bool
) -> None:
    """Run the exchange; a client disconnect cancels it (and with it the upstream request)."""
    task = asyncio.current_task()
    assert task is not None
    gone = False

    async def watch() -> None:
        nonlocal gone
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                gone = True
                task.cancel()
                return

    watcher = asyncio.create_task(watch())
    try:
        await _serve(exchange, conv, send, as_array)
    except asyncio.CancelledError:
        if not gone:
            raise
        task.uncancel()
        exchange.outcome.outcome = "client-disconnected"
        log_event("proxy.client_disconnected", id=exchange.id)
    finally:
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
        exchange.record()


async def _serve(exchange: Exchange, conv: Converter, send: Send, as_array: bool) -> None:
    request = exchange.request
    model = exchange.model_name()
    try:
        response = await exchange.open()
    except UpstreamFailed as failed:
        exchange.note(ir.Failure(failed.error))
        status, body = conv.render_error(failed.error)
        extra = []
        if failed.error.retry_after is not None:
            extra.append((b"retry-after", f"{failed.error.retry_after:g}".encode()))
        await _json(send, status, body, extra)
        return
    events = exchange.events(response)
    if not request.stream:
        collector = ir.Collector()
        try:
            async for batch in events:
                for event in batch:
                    exchange.note(event)
                    collector.feed(event)
        except UpstreamFailed as failed:
            collector.error = failed.error
        finally:
            await events.aclose()
        if collector.error is not None:
            exchange.note(ir.Failure(collector.error))
            status, body = conv.render_error(collector.error)
            await _json(send, status, body)
            return
        answer = conv.render_response(collector.response(), model, request)
        await _json(send, 200, [answer] if as_array else answer)
        return
    encoder = conv.encoder(model, request)
    await send({"type": "http.response.start", "status": 200, "headers": _SSE})
    try:
        async for batch in events:
            for event in batch:
                exchange.note(event)
            data = b"".join([encoder.encode(event) for event in batch])
            if data:
                await send({"type": "http.response.body", "body": data, "more_body": True})
    except UpstreamFailed as failed:
        exchange.note(ir.Failure(failed.error))
        await send(
            {
                "type": "http.response.body",
                "body": conv.stream_error(failed.error),
                "more_body": True,
            }
        )
    finally:
        await events.aclose()
    await send({"type": "http.response.body", "body": b"", "more_body": False})


def _wire_of(path: str) -> ir.Wire:
    if path.endswith("/messages") or path.endswith("/count_tokens"):
        return "anthropic"
    if path.endswith("/chat/completions"):
        return "openai-chat"
    if path.endswith("/responses"):
        return "openai-responses"
    if path.startswith("/v1beta") or _GOOGLE_CALL.search(path):
        return "google"
    return "openai-chat"


async def _body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_REQUEST_BODY:
            raise ValueError(f"the request body is larger than {MAX_REQUEST_BODY} bytes")
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


async def _json(
    send: Send, status: int, body: Any, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    data = encode(body)
    headers = [*_JSON, (b"content-length", str(len(data)).encode()), *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data, "more_body": False})


def create_app(settings: ProxySettings, client: httpx.AsyncClient | None = None) -> ProxyApp:
    """The proxy as an ASGI app. ``client`` replaces the proxy's own upstream pool
    (``_http1.Pool``) with an httpx client (tests give it a ``MockTransport``); the caller closes it."""
    logging.getLogger("corral.proxy")
    return ProxyApp(settings, client)
