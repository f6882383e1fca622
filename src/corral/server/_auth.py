"""Bearer-token check when the service is reachable beyond loopback.

Mutating requests always need the token there, and so do reads of sessions, transcripts and
event streams: a transcript can hold anything the agent read. Only the health check, the OpenAPI
document and the placeholder page stay open.
"""

from __future__ import annotations

import hmac
import ipaddress

from starlette.types import ASGIApp, Receive, Scope, Send

from ._responses import error_response

OPEN_PATHS = frozenset({"/", "/api/health", "/api/openapi.json"})
"""What anyone who can reach the port may read without the token."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class BearerTokenMiddleware:
    """Refuse requests without ``Authorization: Bearer <token>`` (401), but for ``OPEN_PATHS``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] not in OPEN_PATHS:
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                response = error_response(401, "unauthorized", "a bearer token is required")
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
