"""The app factory of ``corral serve``. No module-level state: everything hangs off ``create_app``.

The app owns one :class:`~corral.sessions.SessionManager` for its lifetime (created in the lifespan,
so starting the app recovers interrupted sessions and stopping it disconnects live ones).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import msgspec
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from .._paths import home_dir
from .._version import __version__
from ..errors import CorralError
from ..sessions import DEFAULT_QUEUE_LIMIT, Resolver, SessionManager
from . import _board_api, _sessions_api, _sse
from ._auth import BearerTokenMiddleware, is_loopback
from ._openapi import openapi_document
from ._responses import corral_error_response, error_response


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8765
    db_path: Path = Path("corral.db")
    token: str | None = None
    """Bearer token for mutating requests; required (generated when unset) beyond loopback."""
    queue_limit: int = DEFAULT_QUEUE_LIMIT

    @classmethod
    def from_env(
        cls, *, host: str | None = None, port: int | None = None, db_path: str | None = None
    ) -> Settings:
        """Settings from arguments, then ``CORRAL_*`` environment variables, then defaults."""
        db = db_path or os.environ.get("CORRAL_DB") or str(home_dir() / "corral.db")
        return cls(
            host=host or os.environ.get("CORRAL_HOST", "127.0.0.1"),
            port=port if port is not None else int(os.environ.get("CORRAL_PORT", "8765")),
            db_path=Path(db),
            token=os.environ.get("CORRAL_TOKEN") or None,
            queue_limit=int(os.environ.get("CORRAL_QUEUE_LIMIT", str(DEFAULT_QUEUE_LIMIT))),
        )

    @property
    def requires_token(self) -> bool:
        return not is_loopback(self.host)


_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>corral</title></head>
<body><h1>corral</h1><p>corral {version} is running. The web app arrives in a later release;
the API lives under <code>/api</code> (<a href="/api/openapi.json">OpenAPI</a>).</p></body></html>"""


def create_app(settings: Settings, *, resolver: Resolver | None = None) -> Starlette:
    """The service. ``app.state.token`` is the bearer token in force (``None`` on loopback)."""
    settings.db_path.parent.mkdir(parents=True, exist_ok=True)
    token = settings.token
    if settings.requires_token and not token:
        token = secrets.token_urlsafe(24)

    async def index(request: Request) -> HTMLResponse:
        return HTMLResponse(_PAGE.format(version=__version__))

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True, "version": __version__})

    async def openapi(request: Request) -> JSONResponse:
        return JSONResponse(openapi_document())

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with SessionManager(
            settings.db_path, resolver=resolver, queue_limit=settings.queue_limit
        ) as manager:
            app.state.manager = manager
            yield

    async def on_corral_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, CorralError)
        return corral_error_response(exc)

    async def on_bad_body(request: Request, exc: Exception) -> Response:
        return error_response(422, "ValidationError", str(exc))

    middleware = [Middleware(BearerTokenMiddleware, token=token)] if token else []
    routes = [
        Route("/", index),
        Route("/api/health", health),
        Route("/api/openapi.json", openapi),
        *_sessions_api.ROUTES,
        *_sse.ROUTES,
    ]
    app = Starlette(
        routes=routes,
        middleware=middleware,
        lifespan=lifespan,
        exception_handlers={
            CorralError: on_corral_error,
            msgspec.ValidationError: on_bad_body,
            msgspec.DecodeError: on_bad_body,
        },
    )
    _board_api.mount(app)
    app.state.settings = settings
    app.state.token = token
    return app
