"""``GET /api/adapters``: what the first-run page and the new-session form need about each adapter.

One row per adapter of the registry (:class:`corral.registry.Registry`, the one path from an id to a
class: built-ins, drop-ins and entry points alike), plus one *demo*
row per installed CLI that corral can redirect to its scripted model (see :mod:`._demo`). A row
says whether the CLI is installed, the pinned and installed versions, the capabilities (data from
the adapter class, never inferred from its id), the intents it can enforce when the class declares
them, and the command that installs or repairs it. Whether a CLI is *logged in* is not known:
corral does not read credentials, so ``logged_in`` is ``null`` for real agents.

Detection starts no agent process for a pinned CLI (the pinned install dir is read); others are
asked ``--version``, bounded. The result is cached for :data:`CACHE_SECONDS`; ``?refresh=true``
detects again.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .. import agents
from ..adapters.base import BaseAdapter
from ..registry import Registry, repair_command
from ._demo import DEMO_PREFIX, demo_agent_name
from ._responses import json_response

CACHE_SECONDS = 60.0
DETECT_TIMEOUT = 10.0


class AdapterRow(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    display_name: str
    demo: bool
    """A demo row: the real CLI driven by corral's scripted model, no account needed."""
    installed: bool
    path: str | None
    source: str
    """``pinned`` (corral's install), ``path`` (found on PATH), ``missing`` or ``unavailable``."""
    pinned_version: str | None
    installed_version: str | None
    logged_in: bool | None
    """``True`` for demo rows (no login needed); ``None`` (unknown) for real agents."""
    capabilities: dict[str, bool]
    enforceable_intents: list[str] | None
    """The intents the adapter can enforce, when its class declares them; ``None`` if unknown."""
    provides_models: bool
    models_unavailable: str | None = None
    """Why the adapter lists no models (when ``provides_models`` is false)."""
    repair: list[str] | None
    """The command that installs or repairs the CLI (shown, never run by corral)."""
    error: str | None = None


def _intents(cls: type[BaseAdapter]) -> list[str] | None:
    declared = getattr(cls, "enforceable_intents", None)
    if declared is None:
        return None
    return [str(i) for i in declared]


async def _detect(cls: type[BaseAdapter], pins: dict[str, agents.AgentStatus]) -> dict[str, Any]:
    pin = pins.get(cls.cli_binary or "")
    if pin is not None:
        return {
            "installed": pin.path is not None,
            "path": pin.path,
            "source": pin.source,
            "pinned_version": pin.pinned,
            "installed_version": pin.installed,
            "repair": ["corral", "agents", "install", pin.name],
        }
    error: str | None = None
    try:
        found = await asyncio.wait_for(cls.detect(timeout=DETECT_TIMEOUT), DETECT_TIMEOUT + 2)
    except (TimeoutError, OSError) as exc:
        found, error = None, f"{type(exc).__name__}: {exc}"
    return {
        "installed": found is not None,
        "path": found.path if found else None,
        "source": "path" if found else "missing",
        "pinned_version": None,
        "installed_version": found.version if found else None,
        "error": error,
    }


async def adapter_rows() -> list[AdapterRow]:
    """Detect every adapter of the registry (and its demo variant) now."""
    pins = {}
    for status in agents.status():
        pin = agents.get_pin(status.name)
        pins[pin.bin] = status
    rows: list[AdapterRow] = []
    registry = Registry()
    for entry in registry.entries():
        adapter_id = entry.id
        cls = registry.adapter_class(adapter_id)
        if cls is None:  # listed but not runnable: say why, claim nothing
            reason = registry.runnable(adapter_id).reason or "no adapter class"
            rows.append(_unavailable(adapter_id, reason))
            continue
        found = await _detect(cls, pins)
        if "repair" not in found:
            found["repair"] = repair_command(entry.manifest)
        common = {
            "capabilities": {
                k: bool(v) for k, v in msgspec.to_builtins(cls.capabilities()).items()
            },
            "enforceable_intents": _intents(cls),
            "provides_models": cls.provides_models,
            "models_unavailable": None if cls.provides_models else cls.models_unavailable,
            **found,
        }
        rows.append(
            AdapterRow(
                id=adapter_id, display_name=cls.display_name, demo=False, logged_in=None, **common
            )
        )
        if demo_agent_name(adapter_id) is not None:
            rows.append(
                AdapterRow(
                    id=DEMO_PREFIX + adapter_id,
                    display_name=f"{cls.display_name} · demo (scripted model)",
                    demo=True,
                    logged_in=True,
                    **common,
                )
            )
    return rows


def _unavailable(adapter_id: str, error: str) -> AdapterRow:
    return AdapterRow(
        id=adapter_id,
        display_name=adapter_id,
        demo=False,
        installed=False,
        path=None,
        source="unavailable",
        pinned_version=None,
        installed_version=None,
        logged_in=None,
        capabilities={},
        enforceable_intents=None,
        provides_models=False,
        repair=None,
        error=error,
    )


async def list_adapters(request: Request) -> Response:
    state = request.app.state
    refresh = request.query_params.get("refresh", "false").lower() in ("1", "true", "yes")
    cached: tuple[float, list[AdapterRow]] | None = getattr(state, "adapter_rows", None)
    if refresh or cached is None or time.monotonic() - cached[0] > CACHE_SECONDS:
        cached = (time.monotonic(), await adapter_rows())
        state.adapter_rows = cached
    return json_response(cached[1])


ROUTES = [Route("/api/adapters", list_adapters, methods=["GET"])]

OPENAPI_TYPES: tuple[Any, ...] = (AdapterRow,)
