"""Server-sent events: one session's envelopes, live, resuming from a sequence number.

``GET /api/sessions/{id}/stream`` replays the stored envelopes with ``seq`` greater than the
``Last-Event-ID`` header (or ``?after=``), then follows live ones. Each SSE message has
``id: <seq>``, ``event: <event type>`` and the envelope as JSON in ``data``, so a reconnecting
``EventSource`` resumes exactly where it stopped. ``?follow=false`` ends after the replay. A comment
line is sent every ``KEEPALIVE`` seconds of silence. Any number of observers may follow a session.

The body is written straight to the ASGI ``send`` (:class:`EventStream`), from the hub's frame
feed (:meth:`corral.sessions._hub.Hub.follow_frames`): each envelope is formatted once for all
observers, and the frames waiting for an observer go out as one write. A slow observer never holds
up the others; one that falls a whole buffer behind catches up from the transcript (decision 040).
The response start goes through the middleware (the guard adds its headers there); the body's
writes go to the server's own ``send`` (:data:`SERVER_SEND`), past the middleware's wrappers,
which only look at the start (decision 050).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from ..events import Envelope, encode
from ..sessions import SessionManager

KEEPALIVE = 15.0
SERVER_SEND = "corral.server_send"
"""The scope key under which the app (:class:`corral.server._app.Service`) puts the ASGI
server's own ``send``, before any middleware wraps it."""
HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


def format_event(envelope: Envelope, data: bytes | None = None) -> bytes:
    """The SSE message of ``envelope``; ``data`` is its JSON when the caller has it already."""
    tag = envelope.event.__struct_config__.tag
    if data is None:
        data = encode(envelope)
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (envelope.seq, str(tag).encode(), data)


def _after(request: Request) -> int:
    raw = request.headers.get("last-event-id") or request.query_params.get("after") or "0"
    try:
        return max(0, int(raw))
    except ValueError:
        return 0


async def stream(request: Request) -> Response:
    manager: SessionManager = request.app.state.manager
    session_id = str(request.path_params["session_id"])
    follow = request.query_params.get("follow", "true").lower() not in ("0", "false", "no")
    feed = manager.follow_frames(
        session_id, format_event, after=_after(request), follow=follow, keepalive=KEEPALIVE
    )
    return EventStream(feed)


class EventStream(Response):
    """An SSE body from batches of frames, sent as they come: one ``send`` per batch (an empty
    batch is a keepalive comment). Ends when the feed ends or the client goes away."""

    def __init__(self, batches: AsyncIterator[list[bytes]]) -> None:
        self.batches = batches
        self.status_code = 200
        self.background = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
        # Past the start, every wrapper between here and the server passes a body through as it
        # is: one call per write instead of five (decision 050).
        send = scope.get(SERVER_SEND, send)
        gone = asyncio.create_task(_disconnected(receive))
        writer = asyncio.create_task(self._write(send))
        try:
            await asyncio.wait((gone, writer), return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (writer, gone):
                task.cancel()
            for task in (writer, gone):
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if writer.done() and not writer.cancelled() and writer.exception() is None:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        elif writer.done() and not writer.cancelled() and (exc := writer.exception()):
            raise exc

    async def _write(self, send: Send) -> None:
        try:
            await send(
                {
                    "type": "http.response.body",
                    "body": b": corral event stream\n\n",
                    "more_body": True,
                }
            )
            async for batch in self.batches:
                body = b"".join(batch) if batch else b": keepalive\n\n"
                await send({"type": "http.response.body", "body": body, "more_body": True})
        finally:
            aclose = getattr(self.batches, "aclose", None)
            if aclose is not None:
                await aclose()


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


ROUTES = [Route("/api/sessions/{session_id}/stream", stream, methods=["GET"])]
