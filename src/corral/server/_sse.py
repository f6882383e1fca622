"""Server-sent events: one session's envelopes, live, resuming from a sequence number.

``GET /api/sessions/{id}/stream`` replays the stored envelopes with ``seq`` greater than the
``Last-Event-ID`` header (or ``?after=``), then follows live ones. Each SSE message has
``id: <seq>``, ``event: <event type>`` and the envelope as JSON in ``data``, so a reconnecting
``EventSource`` resumes exactly where it stopped. ``?follow=false`` ends after the replay. A comment
line is sent every ``KEEPALIVE`` seconds of silence. Any number of observers may follow a session.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from ..events import Envelope, encode
from ..sessions import SessionManager

KEEPALIVE = 15.0
COALESCE = 256
"""Envelopes already waiting are sent as one write, up to this many (fewer sends under load)."""


def format_event(envelope: Envelope) -> bytes:
    tag = envelope.event.__struct_config__.tag
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (envelope.seq, str(tag).encode(), encode(envelope))


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
    subscription = manager.subscribe(session_id, after=_after(request), follow=follow)
    return StreamingResponse(
        _frames(subscription),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def _frames(subscription: AsyncIterator[Envelope]) -> AsyncIterator[bytes]:
    # The subscription is drained by its own task so a keepalive timeout never cancels it mid-read.
    inbox: asyncio.Queue[Envelope | None] = asyncio.Queue()

    async def pump() -> None:
        try:
            async for envelope in subscription:
                await inbox.put(envelope)
        finally:
            await inbox.put(None)

    task = asyncio.create_task(pump())
    try:
        yield b": corral event stream\n\n"
        while True:
            if not inbox.empty():
                item = inbox.get_nowait()
            else:
                try:
                    item = await asyncio.wait_for(inbox.get(), KEEPALIVE)
                except TimeoutError:
                    yield b": keepalive\n\n"
                    continue
            if item is None:
                return
            frames = [format_event(item)]
            while len(frames) < COALESCE and not inbox.empty():
                more = inbox.get_nowait()
                if more is None:
                    yield b"".join(frames)
                    return
                frames.append(format_event(more))
            yield b"".join(frames)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


ROUTES = [Route("/api/sessions/{session_id}/stream", stream, methods=["GET"])]
