"""``GET /api/adapters/{adapter_id}/models``: the models an adapter lists live, for the new-session form.

Only adapters that declare ``provides_models`` can answer: Claude Code (its ``initialize``
answer), Codex app-server (``model/list``), the ACP agents (the ``session/new`` models block or
``model`` config option), OpenCode (its server) and Pi (RPC). For those, corral starts a
short-lived instance in a scratch directory, asks ``list_models()`` and stops it, every step
bounded; the answer is cached per adapter for :data:`CACHE_SECONDS`. Every other adapter answers
``live: false`` with its ``models_unavailable`` reason, and the form keeps a free-text model
field: corral never shows a hard-coded cross-provider catalog.

Each model carries the reasoning efforts the agent reports for it (``entries[].efforts``, from
``describe_models()``: Claude's ``supportedEffortLevels``, Codex's ``supportedReasoningEfforts``,
OpenCode's ``variants``). ``takes_effort`` says whether the adapter has an effort option at all
(the ACP agents do not); ``efforts_reason`` says why efforts are missing where they are. The form
offers exactly those efforts, never a fixed list. ``?probe=false`` answers from the cache only
(the session view uses it: opening a session never starts a second agent).
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import time
import uuid
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..adapters._model_info import ModelInfo
from ..adapters.base import BaseAdapter, construct, supported_options
from ..registry import Profile
from ..sessions import SessionManager
from ._responses import json_response

CACHE_SECONDS = 300.0
START_TIMEOUT = 60.0
LIST_TIMEOUT = 20.0
STOP_TIMEOUT = 10.0


class ModelList(msgspec.Struct, frozen=True, kw_only=True):
    adapter_id: str
    live: bool
    """True when the list came from the adapter just now (or from the cache of such a list)."""
    models: list[str]
    reason: str | None = None
    """Why there is no live list (the adapter cannot report one, or asking it failed)."""
    entries: list[ModelInfo] = msgspec.field(default_factory=list)
    """``models`` with what the agent says of each (its efforts), in the same order."""
    takes_effort: bool = False
    """The adapter has an effort launch option."""
    efforts_reason: str | None = None
    """Why efforts are not listed (for every model, or for those with ``efforts: null``)."""


def _effort_facts(cls: type[BaseAdapter], entries: list[ModelInfo]) -> dict[str, Any]:
    takes = "effort" in supported_options(cls)
    if not takes:
        reason: str | None = f"{cls.display_name} takes no reasoning effort at launch"
    elif entries and all(e.efforts is not None for e in entries):
        reason = None
    else:
        reason = cls.efforts_unavailable or f"{cls.display_name} does not list its efforts"
    return {"takes_effort": takes, "efforts_reason": reason}


def listed_models(state: Any, adapter_id: str) -> ModelList | None:
    """The cached live list of ``adapter_id``, if one was asked for recently."""
    cache: dict[str, tuple[float, ModelList]] | None = getattr(state, "model_lists", None)
    hit = (cache or {}).get(adapter_id)
    if hit is None or time.monotonic() - hit[0] >= CACHE_SECONDS:
        return None
    return hit[1]


def check_effort(cls: type[BaseAdapter], profile: Profile, listed: ModelList | None) -> None:
    """ValueError when ``profile.effort`` cannot be honoured: the adapter takes no effort, or
    its live list says the model (or, with no model, every model) has no such effort."""
    effort = profile.effort
    if effort is None:
        return
    if "effort" not in supported_options(cls):
        raise ValueError(
            f"{cls.display_name} takes no reasoning effort at launch (option 'effort')"
        )
    if listed is None or not listed.live:
        return
    entries = [e for e in listed.entries if profile.model in (None, e.id)]
    known = [e.efforts for e in entries if e.efforts is not None]
    if not entries or len(known) < len(entries):
        return  # a model corral has no list for, or efforts not listed: the agent decides
    if not any(effort in efforts for efforts in known):
        offered = sorted({x for efforts in known for x in efforts})
        which = profile.model or "any of its models"
        raise ValueError(
            f"{cls.display_name} lists no effort {effort!r} for {which}"
            + (f" (it lists {', '.join(offered)})" if offered else " (it takes none)")
        )


async def _ask(manager: SessionManager, adapter_id: str) -> ModelList:
    cls = manager.resolver(adapter_id)  # an unknown id raises AdapterNotFoundError: 404
    if not cls.provides_models:
        why = cls.models_unavailable or f"{cls.display_name} does not report its models to corral"
        reason = f"{why}; type a model name"
        return ModelList(
            adapter_id=adapter_id, live=False, models=[], reason=reason, **_effort_facts(cls, [])
        )
    with tempfile.TemporaryDirectory(prefix="corral-models-") as scratch:
        adapter = construct(cls, cwd=scratch)
        try:
            await asyncio.wait_for(adapter.start(f"models-{uuid.uuid4().hex}"), START_TIMEOUT)
            entries = await asyncio.wait_for(adapter.describe_models(), LIST_TIMEOUT)
        except Exception as exc:  # the agent is not ready: say so, the form stays usable
            reason = f"could not ask {cls.display_name}: {type(exc).__name__}: {exc}"
            return ModelList(
                adapter_id=adapter_id,
                live=False,
                models=[],
                reason=reason,
                **_effort_facts(cls, []),
            )
        finally:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(adapter.stop(), STOP_TIMEOUT)
    unique = sorted({e.id: e for e in entries}.values(), key=lambda e: e.id)
    return ModelList(
        adapter_id=adapter_id,
        live=True,
        models=[e.id for e in unique],
        entries=unique,
        **_effort_facts(cls, unique),
    )


def probe_lock(state: Any, adapter_id: str) -> asyncio.Lock:
    """The lock a model probe of ``adapter_id`` holds. A session start of that adapter takes it
    too, so a probe's short-lived agent and the session's never run at once (two OpenCode
    servers on one demo home: the second may exit)."""
    locks: dict[str, asyncio.Lock] | None = getattr(state, "model_locks", None)
    if locks is None:
        locks = state.model_locks = {}
    return locks.setdefault(adapter_id, asyncio.Lock())


async def list_models(request: Request) -> Response:
    adapter_id = str(request.path_params["adapter_id"])
    state = request.app.state
    cache: dict[str, tuple[float, ModelList]] | None = getattr(state, "model_lists", None)
    if cache is None:
        cache = state.model_lists = {}
    hit = cache.get(adapter_id)
    if hit is not None and time.monotonic() - hit[0] < CACHE_SECONDS:
        return json_response(hit[1])
    if request.query_params.get("probe", "true").lower() in ("0", "false", "no"):
        cls = state.manager.resolver(adapter_id)  # an unknown id: 404
        if cls.provides_models:  # only a cached list: starting the agent is not wanted here
            not_yet = f"{cls.display_name}'s models have not been asked for recently"
            return json_response(
                ModelList(
                    adapter_id=adapter_id,
                    live=False,
                    models=[],
                    reason=not_yet,
                    **_effort_facts(cls, []),
                )
            )
    async with probe_lock(state, adapter_id):  # one probe per adapter at a time
        hit = cache.get(adapter_id)
        if hit is None or time.monotonic() - hit[0] >= CACHE_SECONDS:
            result = await _ask(state.manager, adapter_id)
            if result.live:
                cache[adapter_id] = (time.monotonic(), result)
            hit = (time.monotonic(), result)
    return json_response(hit[1])


ROUTES = [Route("/api/adapters/{adapter_id}/models", list_models, methods=["GET"])]

OPENAPI_TYPES: tuple[Any, ...] = (ModelList, ModelInfo)
