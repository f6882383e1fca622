"""``/api/settings``: the service's settings (:mod:`._service_settings`) and the webhook behind them.

* ``GET /api/settings``: the webhook URL and its last delivery, the defaults per adapter, the
  adapters whose profile is stale.
* ``PUT /api/settings/webhook`` ``{"url": "https://…" | null}``: only http(s) URLs; ``null`` or
  blank turns it off.
* ``PUT /api/settings/adapters/{id}/defaults`` ``{"model", "effort", "intent"}``: what the
  new-session form preselects for that adapter (all blank: forgotten).

:func:`mount` opens the store and hangs the :class:`~._webhook.Webhook` on the session hub for the
app's lifetime.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import msgspec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ._responses import Refusal, json_response
from ._service_settings import (
    AdapterDefaults,
    ServiceSettings,
    SettingsStore,
    check_defaults,
    check_webhook_url,
)
from ._webhook import AttentionEvent, Delivery, Webhook


class SettingsView(msgspec.Struct, frozen=True, kw_only=True):
    webhook_url: str | None
    webhook_delivery: Delivery
    adapter_defaults: dict[str, AdapterDefaults]
    stale_profiles: list[str]


class WebhookBody(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    url: str | None = None


def _store(request: Request) -> SettingsStore:
    store: SettingsStore = request.app.state.settings_store
    return store


def _view(request: Request) -> SettingsView:
    current: ServiceSettings = _store(request).current
    webhook: Webhook = request.app.state.webhook
    return SettingsView(
        webhook_url=current.webhook_url,
        webhook_delivery=webhook.delivery,
        adapter_defaults=current.adapter_defaults,
        stale_profiles=current.stale_profiles,
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
    request.app.state.manager.resolver(adapter_id)  # an unknown id: 404
    body: AdapterDefaults = await _decode(request, AdapterDefaults)
    try:
        check_defaults(body)
    except ValueError as exc:
        raise Refusal(422, "ValidationError", str(exc)) from None
    store = _store(request)
    defaults = dict(store.current.adapter_defaults)
    if body == AdapterDefaults():
        defaults.pop(adapter_id, None)
    else:
        defaults[adapter_id] = body
    store.update(adapter_defaults=defaults)
    return json_response(_view(request))


ROUTES = [
    Route("/api/settings", get_settings, methods=["GET"]),
    Route("/api/settings/webhook", put_webhook, methods=["PUT"]),
    Route("/api/settings/adapters/{adapter_id}/defaults", put_defaults, methods=["PUT"]),
]

OPENAPI_TYPES: tuple[Any, ...] = (SettingsView, WebhookBody, AdapterDefaults, AttentionEvent)


def mount(app: Starlette) -> None:
    """Add the routes; open the store and tap the hub with the webhook for the app's lifetime."""
    app.router.routes.extend(ROUTES)
    store = SettingsStore(app.state.settings.db_path.parent)
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
