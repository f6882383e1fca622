"""The event board's HTTP surface, mounted into the app by :func:`mount`.

- ``POST /api/events``: one seed-002 v1 event, one corral envelope, or a JSON list of them (all
  stored or none). 201 with the ids; 400 with the reason and the field path for anything invalid;
  413 past :data:`MAX_BODY`. Emitters send ``Authorization: Bearer <token>`` (``home_dir()/token``)
  like every other client.
- ``GET /api/events``: stored events, ``?after=ID`` or the latest ``?limit=N``, filterable by
  ``agent``, ``task``, ``kind``, ``session``; also returns ``last_id``.
- ``GET /api/events/stream``: SSE. ``id:`` is the board id; resume with ``Last-Event-ID`` (or
  ``?after=``); without either the stream starts live at the current end. A viewer that fell
  behind gets ``event: missed`` (``{"after", "latest"}``) and then the replay of what it missed.
- The page, ``GET /board`` with ``/static/board.js`` and ``board.css``, is served by
  :mod:`._web` like the app (static shell, no data, the same CSP).

Sessions run by this service reach the board through a tap on the session hub.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import msgspec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from ..board import Board, Filter, InvalidEvent, Missed, StoredEvent
from ..events import Envelope
from ..events.board import BoardEvent
from ._responses import error_response, json_response

MAX_BODY = 1 << 20
KEEPALIVE = 15.0
COALESCE = 0.002
"""Seconds a viewer's stream waits after an event for the ones right behind it (one write)."""

_encode = msgspec.json.Encoder().encode


def _board(request: Request) -> Board:
    board: Board | None = getattr(request.app.state, "board", None)
    if board is None:
        raise RuntimeError("the board is not running (the app's lifespan has not started)")
    return board


async def _read_body(receive: Receive, declared: bytes | None) -> bytes | None:
    """The request body, or ``None`` past :data:`MAX_BODY` (declared or streamed)."""
    if declared is not None and declared.isdigit() and int(declared) > MAX_BODY:
        return None
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return bytes(body)
        body += message.get("body", b"")
        if len(body) > MAX_BODY:
            return None
        if not message.get("more_body", False):
            return bytes(body)


class _PostEvents:
    """``POST /api/events`` as a bare ASGI endpoint: it is the hot path of every emitter, so it
    skips the Request/handler wrapping the other routes use (same responses, same errors)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope["headers"])
        body = await _read_body(receive, headers.get(b"content-length"))
        if body is None:
            response = error_response(
                413, "too_large", f"an events body is at most {MAX_BODY} bytes"
            )
        else:
            board: Board | None = getattr(scope["app"].state, "board", None)
            if board is None:
                response = error_response(503, "unavailable", "the board is not running")
            else:
                try:
                    result = await board.ingest_grouped(body)
                except InvalidEvent as exc:
                    response = error_response(400, "invalid_event", exc.reason, path=exc.path)
                else:
                    response = json_response(result.to_json(), 201 if result.stored else 200)
        await response(scope, receive, send)


def _filter(request: Request) -> Filter:
    q = request.query_params
    return Filter(
        agent=q.get("agent") or None,
        task=q.get("task") or None,
        kind=q.get("kind") or None,
        session=q.get("session") or None,
    )


def _int(raw: str | None, default: int, *, low: int = 0, high: int = 1 << 62) -> int:
    try:
        return min(high, max(low, int(raw))) if raw is not None else default
    except ValueError:
        return default


async def list_events(request: Request) -> Response:
    board = _board(request)
    wanted = _filter(request)
    limit = _int(request.query_params.get("limit"), 500, low=1, high=5000)
    after = request.query_params.get("after")
    store = board.store
    f = dict(agent=wanted.agent, task=wanted.task, kind=wanted.kind, session=wanted.session)
    if after is not None:
        events = store.after(_int(after, 0), limit=limit, **f)
    else:
        events = store.recent(limit, **f)
    return json_response({"events": events, "last_id": store.last_id()})


def format_frame(item: StoredEvent | Missed) -> bytes:
    if isinstance(item, Missed):
        payload = _encode({"after": item.after, "latest": item.latest})
        return b"event: missed\ndata: %s\n\n" % payload
    return b"id: %d\nevent: board\ndata: %s\n\n" % (item.id, _encode(item))


async def stream(request: Request) -> Response:
    board = _board(request)
    raw = request.headers.get("last-event-id") or request.query_params.get("after")
    after = _int(raw, board.store.last_id()) if raw is not None else board.store.last_id()
    source = board.follow_batches(after, _filter(request), keepalive=KEEPALIVE, coalesce=COALESCE)
    return StreamingResponse(
        _frames(source),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def _frames(
    source: AsyncIterator[list[StoredEvent] | Missed | None],
) -> AsyncIterator[bytes]:
    # Everything a viewer has queued goes out as one write; None is the keepalive tick.
    yield b"retry: 2000\n: corral board stream\n\n"
    async for item in source:
        if item is None:
            yield b": keepalive\n\n"
        elif isinstance(item, Missed):
            yield format_frame(item)
        else:
            yield b"".join(format_frame(event) for event in item)


ROUTES = [
    Route("/api/events", _PostEvents(), methods=["POST"]),
    Route("/api/events", list_events, methods=["GET"]),
    Route("/api/events/stream", stream, methods=["GET"]),
]


def _session_tap(board: Board, manager: Any) -> Callable[[Envelope], None]:
    adapters: dict[str, str | None] = {}

    def tap(envelope: Envelope) -> None:
        sid = envelope.session_id
        if sid not in adapters:
            try:
                adapters[sid] = manager.store.record(sid).adapter_id  # no wait for writes
            except Exception:  # an unknown session still shows, unnamed
                adapters[sid] = None
        board.tap(envelope, agent=adapters[sid])

    return tap


def mount(app: Starlette) -> None:
    """Add the board's routes and run a :class:`Board` for the app's lifetime."""
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(the_app: Starlette) -> AsyncIterator[Any]:
        async with inner(the_app) as state:
            manager: Any = getattr(the_app.state, "manager", None)
            # The board's table is in the manager's database: its writes go to the manager's
            # writer thread, never on the loop (decision 040).
            submit = manager.submit_write if manager is not None else None
            board = Board(the_app.state.settings.db_path, submit=submit)
            the_app.state.board = board
            tap = _session_tap(board, manager) if manager is not None else None
            if tap is not None:
                manager.hub.taps.append(tap)
            try:
                yield state
            finally:
                if tap is not None:
                    with contextlib.suppress(ValueError):
                        manager.hub.taps.remove(tap)
                board.close()

    app.router.lifespan_context = lifespan
    # First in the table: the router tries routes in order, and ingestion is the hot path.
    app.router.routes[0:0] = ROUTES


OPENAPI_TYPES: tuple[Any, ...] = (BoardEvent, StoredEvent)


def openapi_paths() -> dict[str, dict[str, Any]]:
    """The board's entries of the OpenAPI document (the test checks them against ROUTES)."""
    ref = {"$ref": "#/components/schemas/StoredEvent"}
    err = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}}
    filters = [
        {"name": n, "in": "query", "required": False, "schema": {"type": "string"}}
        for n in ("agent", "task", "kind", "session")
    ]
    after = {"name": "after", "in": "query", "required": False, "schema": {"type": "integer"}}
    limit = {"name": "limit", "in": "query", "required": False, "schema": {"type": "integer"}}
    listing = {
        "type": "object",
        "properties": {"events": {"type": "array", "items": ref}, "last_id": {"type": "integer"}},
    }
    result = {
        "type": "object",
        "properties": {
            "ids": {"type": "array", "items": {"type": "integer"}},
            "stored": {"type": "integer"},
            "skipped": {"type": "array", "items": {"type": "string"}},
        },
    }
    body_schema = {
        "oneOf": [
            {"$ref": "#/components/schemas/BoardEvent"},
            {"$ref": "#/components/schemas/Envelope"},
            {"type": "array", "items": {"type": "object"}},
        ]
    }
    return {
        "/api/events": {
            "post": {
                "summary": "Ingest board events (schema v1, corral envelopes, or a list of them)",
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": body_schema}},
                },
                "responses": {
                    "201": {
                        "description": "Stored",
                        "content": {"application/json": {"schema": result}},
                    },
                    "default": {"description": "An error (400 names the field)", **err},
                },
                "security": [{}, {"bearer": []}],
            },
            "get": {
                "summary": "Stored board events: the latest, or after an id; filterable",
                "parameters": [after, limit, *filters],
                "responses": {
                    "200": {
                        "description": "OK",
                        "content": {"application/json": {"schema": listing}},
                    },
                    "default": {"description": "An error", **err},
                },
            },
        },
        "/api/events/stream": {
            "get": {
                "summary": "Server-sent board events: resume after Last-Event-ID or ?after=",
                "parameters": [after, *filters],
                "responses": {
                    "200": {
                        "description": "text/event-stream; id = board id; event board|missed",
                        "content": {"text/event-stream": {"schema": {"type": "string"}}},
                    }
                },
            }
        },
    }
