"""The app factory of ``corral serve``. No module-level state: everything hangs off ``create_app``."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

from .._paths import home_dir
from .._version import __version__


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8765
    db_path: Path = Path("corral.db")

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
        )


_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>corral</title></head>
<body><h1>corral</h1><p>corral {version} is running. The web app arrives in a later release;
the API lives under <code>/api</code>.</p></body></html>"""


def create_app(settings: Settings) -> Starlette:
    settings.db_path.parent.mkdir(parents=True, exist_ok=True)

    async def index(request: Request) -> HTMLResponse:
        return HTMLResponse(_PAGE.format(version=__version__))

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True, "version": __version__})

    app = Starlette(routes=[Route("/", index), Route("/api/health", health)])
    app.state.settings = settings
    return app
