"""One-time login codes: how the browser gets the token without anyone pasting it.

``corral serve`` prints ``http://127.0.0.1:<port>/auth/login?code=<code>``. ``GET /auth/login``
exchanges a valid code, once, for the cookie ``corral_auth`` (HttpOnly, SameSite=Strict, Path=/)
carrying the service token, and redirects (303) to ``/``. A used, unknown or expired code is refused
(403). ``POST /api/auth/codes`` (authenticated) issues another code and its URL.

Codes live in memory only (a restart invalidates them, never the token) and expire after
``ttl`` seconds (the one ``corral serve`` prints lasts until used); at most :data:`MAX_CODES` are
outstanding (the oldest expiring ones are dropped first).
"""

from __future__ import annotations

import hmac
import math
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Literal

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ._guard import COOKIE
from ._responses import error_response, json_response

MAX_CODES = 64
COOKIE_MAX_AGE = 30 * 24 * 3600


class LoginCodes:
    """Outstanding one-time codes and their expiry times."""

    def __init__(self, ttl: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.clock = clock
        self._codes: OrderedDict[str, float] = OrderedDict()

    def issue(self, *, ttl: float | Literal["default"] | None = "default") -> str:
        """A new code, valid for ``ttl`` seconds (the configured TTL; ``None``: until used)."""
        code = secrets.token_urlsafe(24)
        lifetime = self.ttl if ttl == "default" else ttl
        self._codes[code] = math.inf if lifetime is None else self.clock() + lifetime
        if len(self._codes) > MAX_CODES:
            expiring = [c for c, t in self._codes.items() if t != math.inf] or list(self._codes)
            for old in expiring[: len(self._codes) - MAX_CODES]:
                del self._codes[old]
        return code

    def redeem(self, code: str) -> bool:
        """True once for a valid code; the code is spent whether or not it had expired."""
        for known in list(self._codes):
            if hmac.compare_digest(known.encode(), code.encode()):
                expires = self._codes.pop(known)
                return self.clock() <= expires
        return False


def login_url(base: str, code: str) -> str:
    return f"{base.rstrip('/')}/auth/login?code={code}"


async def login(request: Request) -> Response:
    codes: LoginCodes = request.app.state.login_codes
    code = request.query_params.get("code", "")
    if not code or not codes.redeem(code):
        return error_response(
            403,
            "invalid_login_code",
            "this login link was already used, has expired or is unknown; "
            "ask the running `corral serve` for a new one (POST /api/auth/codes)",
        )
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(
        COOKIE,
        request.app.state.token,
        max_age=COOKIE_MAX_AGE,
        path="/",
        httponly=True,
        samesite="strict",
    )
    response.headers["Cache-Control"] = "no-store"
    return response


async def new_code(request: Request) -> Response:
    codes: LoginCodes = request.app.state.login_codes
    code = codes.issue()
    return json_response({"code": code, "url": login_url(str(request.base_url), code)})


ROUTES = [
    Route("/auth/login", login, methods=["GET"]),
    Route("/api/auth/codes", new_code, methods=["POST"]),
]
