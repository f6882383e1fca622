"""The hand-off's HTTP surface (seed 003; docs/handoff.md), mounted by :func:`mount`.

A :class:`~corral.sessions._handoff.HandoffFlow` runs beside the app's session manager for the
app's lifetime. Every route is behind the service's token like the rest of ``/api``.

- ``GET /api/handoff/links``: every link (vendor session ↔ corral session); the vendor sessions
  themselves are listed by ``GET /api/external-sessions`` (:mod:`._external_api`);
- ``POST /api/handoff/links`` ``{adapter_id, sid, cwd?}``: link one (idempotent per vendor
  session) → the link and its corral session;
- ``GET /api/sessions/{id}/handoff``: the session's link, whether it is mirrored, its resume
  command;
- ``POST /api/sessions/{id}/handoff/terminal``: "continue in terminal": release the idle session
  and answer the command (``argv``, ``cwd`` and a ``shell`` line to copy).
"""

from __future__ import annotations

import shlex
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import msgspec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..errors import SessionError
from ..sessions._handoff import HandoffFlow, Link
from ._bodies import LinkExternal
from ._confine import check_cwd
from ._limits import Limits, check_fields
from ._responses import Refusal, json_response


class Handoff(msgspec.Struct, frozen=True, kw_only=True):
    link: Link
    mirroring: bool
    resume_command: list[str] | None = None


class TerminalCommand(msgspec.Struct, frozen=True, kw_only=True):
    session_id: str
    argv: list[str]
    cwd: str
    shell: str
    """``cd <cwd> && <argv>``, quoted for a POSIX shell: what the app copies."""


def _flow(request: Request) -> HandoffFlow:
    flow: HandoffFlow | None = getattr(request.app.state, "handoff", None)
    if flow is None:
        raise Refusal(503, "handoff_unavailable", "the hand-off flow is not running")
    return flow


async def list_links(request: Request) -> Response:
    return json_response(_flow(request).links())


async def link(request: Request) -> Response:
    body = msgspec.json.decode(await request.body() or b"{}", type=LinkExternal)
    limits: Limits = request.app.state.limits
    check_fields(body, limits)
    check_cwd(body.cwd)
    flow = _flow(request)
    made = await flow.link(body.adapter_id, body.sid, cwd=body.cwd)
    return json_response(
        {"link": made, "session": flow.manager.get_session(made.session_id)}, status=201
    )


async def show(request: Request) -> Response:
    flow = _flow(request)
    sid = str(request.path_params["session_id"])
    flow.manager.get_session(sid)  # 404 for an unknown session
    described = flow.describe(sid)
    if described is None:
        raise SessionError(f"session {sid} is not linked to a terminal session", sid)
    return json_response(msgspec.convert(described, Handoff))


async def to_terminal(request: Request) -> Response:
    flow = _flow(request)
    sid = str(request.path_params["session_id"])
    release = await flow.continue_in_terminal(sid)
    shell = f"cd {shlex.quote(release.cwd)} && {shlex.join(release.command)}"
    return json_response(
        TerminalCommand(session_id=sid, argv=release.command, cwd=release.cwd, shell=shell)
    )


S = "/api/sessions/{session_id}"
ROUTES = [
    Route("/api/handoff/links", list_links, methods=["GET"]),
    Route("/api/handoff/links", link, methods=["POST"]),
    Route(f"{S}/handoff", show, methods=["GET"]),
    Route(f"{S}/handoff/terminal", to_terminal, methods=["POST"]),
]

OPENAPI_TYPES: tuple[Any, ...] = (Link, Handoff, TerminalCommand, LinkExternal)


def openapi_paths() -> dict[str, dict[str, Any]]:
    def ref(name: str) -> dict[str, Any]:
        return {
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{name}"}}}
        }

    sid = [{"name": "session_id", "in": "path", "required": True, "schema": {"type": "string"}}]
    listing = {"content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Link"}}}}}  # fmt: skip
    return {
        "/api/handoff/links": {
            "get": {
                "summary": "Every hand-off link",
                "responses": {"200": {"description": "OK", **listing}},
            },
            "post": {
                "summary": "Link a corral session to a vendor session",
                "requestBody": {"required": True, **ref("LinkExternal")},
                "responses": {"201": {"description": "Linked"}},
            },
        },
        f"{S}/handoff": {
            "get": {
                "summary": "The session's hand-off link",
                "parameters": sid,
                "responses": {"200": {"description": "OK", **ref("Handoff")}},
            }
        },
        f"{S}/handoff/terminal": {
            "post": {
                "summary": "Continue in terminal: release the idle session, get the command",
                "parameters": sid,
                "responses": {"200": {"description": "OK", **ref("TerminalCommand")}},
            }
        },
    }


def mount(app: Starlette) -> None:
    """Add the routes and run a :class:`HandoffFlow` beside the manager for the app's lifetime."""
    app.router.routes.extend(ROUTES)
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(the_app: Starlette) -> AsyncIterator[Any]:
        async with inner(the_app) as state:
            manager: Any = getattr(the_app.state, "manager", None)
            if manager is None:
                yield state
                return
            async with HandoffFlow(manager) as flow:
                the_app.state.handoff = flow
                try:
                    yield state
                finally:
                    the_app.state.handoff = None

    app.router.lifespan_context = lifespan
