"""``/api/settings``: the service's settings (:mod:`._service_settings`) and the webhook behind them.

* ``GET /api/settings``: the webhook URL and its last delivery, each adapter's profile (its
  defaults), the adapters whose verification is stale.
* ``PUT /api/settings/webhook`` ``{"url": "https://…" | null}``: only http(s) URLs; ``null`` or
  blank turns it off.
* ``PUT /api/settings/adapters/{id}/defaults`` ``{"model", "effort", "intent"}``: the adapter's
  profile (:mod:`corral.registry._profiles`, in corral's home): what a launch naming none of
  them uses, and what the new-session form preselects (all blank: forgotten). Changing it makes
  the adapter's verification stale, so the next launch re-verifies.
* ``GET /api/settings/conformance``: the recorded conformance results per agent and CLI version
  (``corral conformance`` writes them; read-only here).
* ``POST /api/settings/adapters/{id}/verify``: verify the adapter's launch now and record it.

Verification uses the registry's records (:mod:`corral.registry`): an adapter whose structured
profile or user profile changed since its last passing verify is *stale*;
:func:`corral.registry.launch_gate` (awaited by the session manager before every launch, and by
``corral run``) re-verifies a stale adapter first and refuses the launch when that fails. An
adapter never verified is shown as such and launches without a gate (the first verify is the
user's call).

:func:`mount` opens the store and hangs the :class:`~._webhook.Webhook` on the session hub for the
app's lifetime.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

import msgspec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..adapters._options import LaunchOptions
from ..adapters.base import check_options
from ..manifests import Manifest
from ..registry import (
    Profile,
    Registry,
    check_profile,
    is_stale,
    last_verify,
    load_profiles,
    record_verify,
    save_profile,
    verify,
)
from ._models_api import check_effort, listed_models
from ._responses import Refusal, json_response
from ._service_settings import (
    ServiceSettings,
    SettingsStore,
    check_webhook_url,
    migrate_defaults,
)
from ._webhook import AttentionEvent, Delivery, Webhook

VERIFY_TIMEOUT = 40.0


class VerifyState(msgspec.Struct, frozen=True, kw_only=True):
    adapter_id: str
    verified: bool
    """A verification is recorded (passing or not)."""
    ok: bool | None
    stale: bool
    """The profile changed since the last passing verify, or that verify failed."""
    checked_at: datetime | None
    detail: str | None


class ConformanceResult(msgspec.Struct, frozen=True, kw_only=True):
    scenario: str
    outcome: str
    """``pass`` | ``fail`` | ``unsupported``."""
    reason: str | None = None
    seconds: float = 0.0


class AgentConformance(msgspec.Struct, frozen=True, kw_only=True):
    """One agent's recorded conformance run (see ``corral.testing.conformance._results``)."""

    agent: str
    adapter_id: str | None
    version: str | None
    ran_at: datetime
    results: list[ConformanceResult]


class SettingsView(msgspec.Struct, frozen=True, kw_only=True):
    webhook_url: str | None
    webhook_delivery: Delivery
    adapter_defaults: dict[str, Profile]
    """Each adapter's profile (only adapters with one)."""
    verification: list[VerifyState]


class WebhookBody(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    url: str | None = None


def _store(request: Request) -> SettingsStore:
    store: SettingsStore = request.app.state.settings_store
    return store


def _view(request: Request) -> SettingsView:
    current: ServiceSettings = _store(request).current
    webhook: Webhook = request.app.state.webhook
    registry = Registry()
    return SettingsView(
        webhook_url=current.webhook_url,
        webhook_delivery=webhook.delivery,
        adapter_defaults=load_profiles(home=registry.home),
        verification=[_verify_state(e.manifest, registry) for e in registry.entries()],
    )


def _verify_state(manifest: Manifest, registry: Registry) -> VerifyState:
    record = last_verify(manifest.id, home=registry.home)
    return VerifyState(
        adapter_id=manifest.id,
        verified=record is not None,
        ok=record.ok if record else None,
        stale=record is not None and is_stale(manifest, home=registry.home),
        checked_at=record.checked_at if record else None,
        detail=record.detail if record else None,
    )


async def _decode(request: Request, kind: type[Any]) -> Any:
    try:
        return msgspec.json.decode(await request.body() or b"{}", type=kind)
    except RecursionError:
        raise Refusal(422, "ValidationError", "the request body is nested too deeply") from None


async def get_settings(request: Request) -> Response:
    return json_response(_view(request))


async def put_webhook(request: Request) -> Response:
    body: WebhookBody = await _decode(request, WebhookBody)
    try:
        url = check_webhook_url(body.url)
    except ValueError as exc:
        raise Refusal(422, "ValidationError", str(exc), field="url") from None
    _store(request).update(webhook_url=url)
    return json_response(_view(request))


async def put_defaults(request: Request) -> Response:
    adapter_id = str(request.path_params["adapter_id"])
    cls = request.app.state.manager.resolver(adapter_id)  # an unknown id: 404
    body: Profile = await _decode(request, Profile)
    try:
        check_profile(body)
        check_effort(cls, body, listed_models(request.app.state, adapter_id))
    except ValueError as exc:
        raise Refusal(422, "ValidationError", str(exc), field="effort") from None
    # what a launch could not honour is refused now (IntentRefused, UnsupportedOperation: 422)
    check_options(cls, LaunchOptions.create(model=body.model, intent=body.intent))
    save_profile(adapter_id, body, home=Registry().home)  # a changed profile: stale
    return json_response(_view(request))


async def post_verify(request: Request) -> Response:
    adapter_id = str(request.path_params["adapter_id"])
    registry = Registry()
    manifest = registry.manifest(adapter_id)  # an unknown id: 404
    result = await asyncio.wait_for(
        verify(manifest, timeout=VERIFY_TIMEOUT), VERIFY_TIMEOUT * 2 + 5
    )
    record_verify(manifest, result, home=registry.home)
    return json_response(_verify_state(manifest, registry))


async def get_conformance(request: Request) -> Response:
    from ..testing.conformance._results import load_results  # the service rarely needs it

    stored = sorted(load_results().values(), key=lambda r: r.agent)
    return json_response(msgspec.convert(msgspec.to_builtins(stored), list[AgentConformance]))


ROUTES = [
    Route("/api/settings", get_settings, methods=["GET"]),
    Route("/api/settings/conformance", get_conformance, methods=["GET"]),
    Route("/api/settings/adapters/{adapter_id}/verify", post_verify, methods=["POST"]),
    Route("/api/settings/webhook", put_webhook, methods=["PUT"]),
    Route("/api/settings/adapters/{adapter_id}/defaults", put_defaults, methods=["PUT"]),
]


OPENAPI_TYPES: tuple[Any, ...] = (
    SettingsView,
    VerifyState,
    WebhookBody,
    Profile,
    AttentionEvent,
    AgentConformance,
)


def mount(app: Starlette) -> None:
    """Add the routes; open the store and tap the hub with the webhook for the app's lifetime."""
    app.router.routes.extend(ROUTES)
    store = SettingsStore(app.state.settings.db_path.parent)
    migrate_defaults(store)
    webhook = Webhook(lambda: store.current.webhook_url)
    app.state.settings_store = store
    app.state.webhook = webhook
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(the_app: Starlette) -> AsyncIterator[Any]:
        async with inner(the_app) as state:
            manager: Any = getattr(the_app.state, "manager", None)
            if manager is not None:
                manager.hub.taps.append(webhook.tap)
            try:
                yield state
            finally:
                if manager is not None:
                    with contextlib.suppress(ValueError):
                        manager.hub.taps.remove(webhook.tap)
                await webhook.close()

    app.router.lifespan_context = lifespan
