"""The app factory of ``corral serve``. No module-level state: everything hangs off ``create_app``.

Every request passes the edge checks first (:mod:`._guard`: Host, Origin, token or cookie, JSON
mutations; :mod:`._limits`: body size), see docs/security.md.

The app owns one :class:`~corral.sessions.SessionManager` for its lifetime (created in the lifespan,
so starting the app recovers interrupted sessions and stopping it disconnects live ones).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from .._paths import ensure_private_dir, home_dir
from .._version import __version__
from ..errors import ConfigError, CorralError
from ..sessions import DEFAULT_QUEUE_LIMIT, WRITERS, AdapterResolver, Resolver, SessionManager
from . import (
    _adapters_api,
    _board_api,
    _external_api,
    _files_api,
    _handoff_api,
    _login,
    _models_api,
    _overview_api,
    _sessions_api,
    _settings_api,
    _sse,
    _web,
)
from ._demo import DemoProvider, demo_resolver
from ._guard import RequestGuard
from ._limits import BodyLimit, Limits
from ._login import LoginCodes
from ._openapi import openapi_document
from ._responses import Refusal, corral_error_response, error_response


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be an integer, not {raw!r}") from None


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8765
    db_path: Path = Path("corral.db")
    token: str | None = None
    """Bearer token (and cookie value) every request but the open paths needs, loopback included.
    ``None``: a random one for this app's lifetime (``corral serve`` passes the token file's)."""
    queue_limit: int = DEFAULT_QUEUE_LIMIT
    allowed_hosts: tuple[str, ...] = ()
    """Host names accepted besides the loopback names (``CORRAL_ALLOWED_HOSTS``, comma-separated)."""
    limits: Limits = field(default_factory=Limits)
    login_code_ttl: float = 600.0
    """Seconds a one-time login code stays valid (``CORRAL_LOGIN_CODE_TTL``)."""
    writer: str = "process"
    """Where the session manager's database writes run (``CORRAL_WRITER``): ``"process"``, a
    child process with a GIL of its own (decision 051), or ``"thread"``, a thread of this one."""

    def __post_init__(self) -> None:
        if self.writer not in WRITERS:
            raise ConfigError(
                f"CORRAL_WRITER must be one of {', '.join(WRITERS)}, not {self.writer!r}"
            )

    @classmethod
    def from_env(
        cls, *, host: str | None = None, port: int | None = None, db_path: str | None = None
    ) -> Settings:
        """Settings from arguments, then ``CORRAL_*`` environment variables, then defaults."""
        db = db_path or os.environ.get("CORRAL_DB") or str(home_dir() / "corral.db")
        hosts = os.environ.get("CORRAL_ALLOWED_HOSTS", "")
        base = Limits()
        return cls(
            host=host or os.environ.get("CORRAL_HOST", "127.0.0.1"),
            port=port if port is not None else _env_int("CORRAL_PORT", 8765),
            db_path=Path(db),
            token=os.environ.get("CORRAL_TOKEN") or None,
            queue_limit=_env_int("CORRAL_QUEUE_LIMIT", DEFAULT_QUEUE_LIMIT),
            allowed_hosts=tuple(h.strip() for h in hosts.split(",") if h.strip()),
            limits=Limits(
                max_body_bytes=_env_int("CORRAL_MAX_BODY_BYTES", base.max_body_bytes),
                max_text_bytes=_env_int("CORRAL_MAX_TEXT_BYTES", base.max_text_bytes),
                max_attachment_bytes=_env_int(
                    "CORRAL_MAX_ATTACHMENT_BYTES", base.max_attachment_bytes
                ),
            ),
            login_code_ttl=float(_env_int("CORRAL_LOGIN_CODE_TTL", 600)),
            writer=os.environ.get("CORRAL_WRITER") or "process",
        )


class Service(Starlette):
    """The Starlette app that also hands the server's own ``send`` to the routes, under
    :data:`._sse.SERVER_SEND`: the SSE body's writes skip the middleware's wrappers, which act on
    a response's start only (decision 050)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope[_sse.SERVER_SEND] = send
        await super().__call__(scope, receive, send)


def create_app(settings: Settings, *, resolver: Resolver | None = None) -> Starlette:
    """The service. ``app.state.token`` is the token in force, ``app.state.login_codes`` issues
    one-time login codes (see :mod:`corral.server._login`)."""
    if not settings.db_path.parent.exists():
        ensure_private_dir(settings.db_path.parent)
    token = settings.token or secrets.token_urlsafe(32)
    for name in settings.allowed_hosts:
        if "*" in name or "/" in name or not name.strip():
            raise ConfigError(f"allowed host {name!r} is not a host name (wildcards are refused)")
    demo = DemoProvider(settings.db_path.parent / "demo-home")
    resolver = demo_resolver(resolver or AdapterResolver(), demo)

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True, "version": __version__})

    async def openapi(request: Request) -> JSONResponse:
        return JSONResponse(openapi_document())

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            async with SessionManager(
                settings.db_path,
                resolver=resolver,
                queue_limit=settings.queue_limit,
                writer=settings.writer,
            ) as manager:
                app.state.manager = manager
                yield
        finally:
            demo.close()
            index = getattr(app.state, "external_index", None)
            if index is not None:
                index.conn.close()

    async def on_corral_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, CorralError)
        return corral_error_response(exc)

    async def on_bad_body(request: Request, exc: Exception) -> Response:
        return error_response(422, "ValidationError", str(exc))

    async def on_refusal(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, Refusal)
        return exc.response()

    middleware = [
        Middleware(RequestGuard, token=token, allowed_hosts=settings.allowed_hosts),
        Middleware(BodyLimit, max_bytes=settings.limits.max_body_bytes),
    ]
    routes = [
        # The live path first: Starlette matches the routes in order, on every request.
        *_sse.ROUTES,
        *_sessions_api.LIVE_ROUTES,
        *_web.ROUTES,
        *_adapters_api.ROUTES,
        *_external_api.ROUTES,
        *_models_api.ROUTES,
        *_files_api.ROUTES,
        *_overview_api.ROUTES,
        Route("/api/health", health),
        Route("/api/openapi.json", openapi),
        *_login.ROUTES,
        *_sessions_api.ROUTES,
    ]
    app = Service(
        routes=routes,
        middleware=middleware,
        lifespan=lifespan,
        exception_handlers={
            CorralError: on_corral_error,
            Refusal: on_refusal,
            msgspec.ValidationError: on_bad_body,
            msgspec.DecodeError: on_bad_body,
        },
    )
    _board_api.mount(app)
    app.state.settings = settings
    app.state.token = token
    app.state.limits = settings.limits
    app.state.login_codes = LoginCodes(settings.login_code_ttl)
    app.state.demo = demo
    _settings_api.mount(app)
    _handoff_api.mount(app)
    return app
