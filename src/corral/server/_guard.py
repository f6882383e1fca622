"""The edge of ``corral serve``: who may talk to it, from where, and how.

Every HTTP request passes these checks, in this order, before any route runs:

1. **Host** must be an allowed name (:func:`host_allowed`): the loopback names ``127.0.0.1``,
   ``localhost``, ``::1`` (any loopback address, any port) and the names configured in
   ``Settings.allowed_hosts`` / ``CORRAL_ALLOWED_HOSTS``. A DNS-rebinding page reaches the port
   under its own name (``Host: evil.example``) and is refused here, before it can read anything.
2. **Origin**, when the request carries one, must be the service's own origin
   (``http://<the Host header>``). Browsers send it on every cross-site ``fetch``/form ``POST``;
   non-browser clients (the CLI, curl) send none, which is fine.
3. **Credentials**: ``Authorization: Bearer <token>`` or the cookie ``corral_auth=<token>``, on
   loopback too, for everything but :data:`OPEN_PATHS` (health, the login exchange, and the static
   page shell, which hold no data).
4. **Mutations** (``POST``, ``PUT``, ``PATCH``, ``DELETE``) must say ``Content-Type:
   application/json``: a cross-site *simple* request (``text/plain``, form encodings) cannot, without
   a CORS preflight that this service never grants.

Refusals are JSON error bodies: 403 (host, origin), 401 (credentials), 415 (content type).
Every response also carries :data:`RESPONSE_HEADERS`: never framed by another site (clickjacking),
never content-sniffed, and no ``Referer`` leaves the app (a login link's code stays put).
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Iterable

from starlette.requests import cookie_parser
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ._responses import error_response

COOKIE = "corral_auth"
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
OPEN_PATHS = frozenset({"/", "/board", "/api/health", "/auth/login"})
"""Paths anyone who passes the Host/Origin checks may ``GET`` without credentials."""
OPEN_PREFIXES = ("/static/",)
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
RESPONSE_HEADERS = (
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
)


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """The name part of a ``Host`` header: ``[::1]:8765`` → ``::1``, ``Foo:80`` → ``foo``."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    if header.count(":") == 1:
        return header.split(":", 1)[0]
    return header


def host_allowed(header: str, allowed: Iterable[str] = ()) -> bool:
    name = host_name(header)
    if not name:
        return False
    if name in LOOPBACK_NAMES or is_loopback(name):
        return True
    return name in {a.strip().lower().strip("[]") for a in allowed}


def is_open(method: str, path: str) -> bool:
    return method in ("GET", "HEAD") and (path in OPEN_PATHS or path.startswith(OPEN_PREFIXES))


class RequestGuard:
    """ASGI middleware applying the checks of the module docstring to every HTTP request."""

    def __init__(self, app: ASGIApp, *, token: str, allowed_hosts: Iterable[str] = ()) -> None:
        self.app = app
        self.token = token.encode()
        self.allowed_hosts = tuple(allowed_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                extra = [(k, v) for k, v in RESPONSE_HEADERS if k not in present]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        refusal = self.refusal(scope)
        if refusal is not None:
            status, kind, message = refusal
            await error_response(status, kind, message)(scope, receive, send_with_headers)
            return
        await self.app(scope, receive, send_with_headers)

    def refusal(self, scope: Scope) -> tuple[int, str, str] | None:
        headers: dict[bytes, bytes] = {}
        for key, value in scope["headers"]:
            headers.setdefault(key, value)  # the first of repeated headers, like Starlette
        host = headers.get(b"host", b"").decode("latin-1")
        if not host_allowed(host, self.allowed_hosts):
            return 403, "forbidden_host", f"host {host!r} is not allowed (see CORRAL_ALLOWED_HOSTS)"
        origin = headers.get(b"origin")
        if origin is not None and origin.decode("latin-1").lower() != f"http://{host}".lower():
            return 403, "forbidden_origin", "cross-origin requests are refused"
        method, path = scope["method"], scope["path"]
        if not is_open(method, path) and not self.authenticated(headers):
            return 401, "unauthorized", "a bearer token (or the corral_auth cookie) is required"
        if method not in SAFE_METHODS:
            media = headers.get(b"content-type", b"").split(b";", 1)[0].strip().lower()
            if media != b"application/json":
                return (
                    415,
                    "unsupported_media_type",
                    "mutations require Content-Type: application/json",
                )
        return None

    def authenticated(self, headers: dict[bytes, bytes]) -> bool:
        given = headers.get(b"authorization", b"")
        if given[:7].lower() == b"bearer " and hmac.compare_digest(given[7:].strip(), self.token):
            return True
        cookie = headers.get(b"cookie")
        if cookie:
            value = cookie_parser(cookie.decode("latin-1")).get(COOKIE, "")
            return hmac.compare_digest(value.encode(), self.token)
        return False
