"""The web app's static shell: ``/`` (the page) and ``/static/<file>`` (its scripts and styles).

The files ship inside the package (``corral/server/web/``): no build step, no CDN, nothing fetched
from outside. They hold no data; the page reads everything through the documented API. Every
response carries a Content-Security-Policy that allows scripts, styles and connections from the
service's own origin only, so nothing an agent writes into a transcript can run as script even if
it reached the DOM as markup (the page never puts agent text into ``innerHTML``).
"""

from __future__ import annotations

import re
from importlib import resources

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ._responses import error_response

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
MEDIA_TYPES = {
    "html": "text/html; charset=utf-8",
    "js": "text/javascript; charset=utf-8",
    "css": "text/css; charset=utf-8",
    "svg": "image/svg+xml",
}
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,60}\.(js|css|svg)$")


def _asset(name: str) -> bytes | None:
    item = resources.files("corral.server").joinpath("web", name)
    try:
        return item.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _page(name: str) -> Response:
    body = _asset(name)
    if body is None:  # pragma: no cover - a broken install
        return error_response(500, "missing_asset", f"{name} is not installed")
    return Response(body, media_type=MEDIA_TYPES["html"], headers=HEADERS)


async def index(request: Request) -> Response:
    return _page("index.html")


async def board(request: Request) -> Response:
    """The event board's page (seed 002); its data comes from ``/api/events``."""
    return _page("board.html")


async def static(request: Request) -> Response:
    name = str(request.path_params["name"])
    match = _NAME.match(name)
    body = _asset(name) if match else None
    if match is None or body is None:
        return error_response(404, "not_found", f"no static file {name!r}")
    return Response(body, media_type=MEDIA_TYPES[match.group(1)], headers=HEADERS)


ROUTES = [
    Route("/", index, methods=["GET"]),
    Route("/board", board, methods=["GET"]),
    Route("/static/{name}", static, methods=["GET"]),
]
