"""The hand-off's HTTP surface (seed 003; docs/handoff.md), mounted by :func:`mount`.

A :class:`~corral.sessions._handoff.HandoffFlow` runs beside the app's session manager for the
app's lifetime. Every route is behind the service's token like the rest of ``/api``.

- ``GET /api/handoff/external``: vendor sessions found in the stores of the adapters that take
  part in hand-off (newest first, at most ``limit``), with the corral session linked to each;
- ``POST /api/handoff/links`` ``{adapter_id, sid, cwd?}``: link one (idempotent per vendor
  session) → the link and its corral session;
- ``GET /api/sessions/{id}/handoff``: the session's link, whether it is mirrored, its resume
  command;
- ``POST /api/sessions/{id}/handoff/terminal``: "continue in terminal": release the idle session
  and answer the command (``argv``, ``cwd`` and a ``shell`` line to copy).
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import msgspec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..adapters._handoff import ExternalSession
from ..errors import CorralError, SessionError
from ..sessions._handoff import HandoffFlow, Link
from ..sessions._resume_check import store_env
from ._bodies import LinkExternal
from ._confine import check_cwd
from ._limits import Limits, check_fields
from ._responses import Refusal, json_response

SCAN_TIMEOUT = 20.0
MAX_LISTED = 500


class ExternalEntry(msgspec.Struct, frozen=True, kw_only=True):
    session: ExternalSession
    linked_session_id: str | None = None


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


def _scan_all(flow: HandoffFlow, limit: int) -> list[ExternalSession]:
    manager = flow.manager
    found: dict[tuple[str, str], ExternalSession] = {}
    for adapter_id in handoff_adapters(flow):
        cls = manager.resolver(adapter_id)
        with contextlib.suppress(CorralError, OSError):
            for entry in cls.scan_external_sessions(env=store_env(cls)):
                found.setdefault((entry.path, entry.sid), entry)
    return sorted(found.values(), key=lambda e: e.mtime, reverse=True)[:limit]


def handoff_adapters(flow: HandoffFlow) -> list[str]:
    """One adapter id per vendor store (the primary driver of each CLI)."""
    from ..adapters._stores import PRIMARY

    ids: list[str] = []
    for adapter_id in PRIMARY.values():
        with contextlib.suppress(CorralError):
            if flow.manager.resolver(adapter_id).supports_handoff():
                ids.append(adapter_id)
    return ids


async def external(request: Request) -> Response:
    flow = _flow(request)
    raw = request.query_params.get("limit", "100")
    if not raw.isdigit() or not 0 < int(raw) <= MAX_LISTED:
        raise Refusal(422, "ValidationError", f"limit must be 1..{MAX_LISTED}")
    try:
        entries = await asyncio.wait_for(asyncio.to_thread(_scan_all, flow, int(raw)), SCAN_TIMEOUT)
    except TimeoutError:
        raise Refusal(504, "scan_timeout", f"the stores took over {SCAN_TIMEOUT:.0f} s") from None
    linked = {(lk.adapter_id, lk.external_sid): lk.session_id for lk in flow.links()}
    return json_response(
        [
            ExternalEntry(session=e, linked_session_id=linked.get((e.agent_id, e.sid)))
            for e in entries
        ]
    )


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
    Route("/api/handoff/external", external, methods=["GET"]),
    Route("/api/handoff/links", link, methods=["POST"]),
    Route(f"{S}/handoff", show, methods=["GET"]),
    Route(f"{S}/handoff/terminal", to_terminal, methods=["POST"]),
]

OPENAPI_TYPES: tuple[Any, ...] = (ExternalEntry, Handoff, TerminalCommand, LinkExternal)


def openapi_paths() -> dict[str, dict[str, Any]]:
    def ref(name: str) -> dict[str, Any]:
        return {
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{name}"}}}
        }

    sid = [{"name": "session_id", "in": "path", "required": True, "schema": {"type": "string"}}]
    limit = [{"name": "limit", "in": "query", "required": False, "schema": {"type": "integer"}}]
    listing = {"content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/ExternalEntry"}}}}}  # fmt: skip
    return {
        "/api/handoff/external": {
            "get": {
                "summary": "Vendor sessions started outside corral, newest first",
                "parameters": limit,
                "responses": {"200": {"description": "OK", **listing}},
            }
        },
        "/api/handoff/links": {
            "post": {
                "summary": "Link a corral session to a vendor session",
                "requestBody": {"required": True, **ref("LinkExternal")},
                "responses": {"201": {"description": "Linked"}},
            }
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
