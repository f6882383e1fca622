"""``GET /api/external-sessions``: the sessions in the agents' own stores, from corral's index.

Query: ``agent`` (an adapter id with a store reader; another is refused with 422, naming it),
``cwd`` (only sessions of that directory) and ``refresh`` (default true: stat the stores and read
the headers of changed files first; false answers from the index as it is). The stores are the
service process's own (its ``HOME``, ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME`` …). Authenticated like
every other ``/api`` route (docs/security.md). The refresh runs off the event loop, one at a time.
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .. import _db
from ..adapters._handoff import ExternalSession
from ..errors import ConfigError
from ..sessions._external import ExternalIndex, IndexStats, store_ids
from ._responses import error_response, json_response


class ExternalSessionList(msgspec.Struct, frozen=True, kw_only=True):
    sessions: list[ExternalSession]
    index: IndexStats | None
    """What the refresh did (``None`` with ``refresh=false``)."""


_lock = threading.Lock()


def _index(request: Request) -> ExternalIndex:
    state = request.app.state
    index: ExternalIndex | None = getattr(state, "external_index", None)
    if index is None:
        conn = _db.connect(state.settings.db_path, synchronous="NORMAL")
        index = ExternalIndex(conn)
        state.external_index = index
    return index


def _answer(request: Request, agent: str | None, cwd: str | None, refresh: bool) -> Any:
    with _lock:  # one connection, one refresh at a time
        index = _index(request)
        stats = index.refresh(agents=store_ids(agent)) if refresh else None
        found = index.sessions(agent=agent, cwd=cwd, env=os.environ)
    return ExternalSessionList(sessions=found, index=stats)


async def list_external(request: Request) -> Response:
    params = request.query_params
    agent = params.get("agent") or None
    cwd = params.get("cwd") or None
    if cwd is not None and not os.path.isabs(cwd):
        return error_response(422, "ValidationError", "cwd must be an absolute path")
    refresh = params.get("refresh", "true").lower() not in ("0", "false", "no")
    try:
        store_ids(agent)
    except ConfigError as exc:
        return error_response(422, "ConfigError", str(exc))
    return json_response(await asyncio.to_thread(_answer, request, agent, cwd, refresh))


ROUTES = [Route("/api/external-sessions", list_external, methods=["GET"])]

OPENAPI_TYPES: tuple[Any, ...] = (ExternalSessionList,)
