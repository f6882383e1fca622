"""JSON responses and the library-error → HTTP status mapping."""

from __future__ import annotations

from typing import Any

import msgspec
from starlette.responses import Response

from .._redact import redact
from ..errors import (
    AdapterNotFoundError,
    AdapterUnverified,
    ConfigError,
    CorralError,
    IntentRefused,
    PromptNotFoundError,
    QueueError,
    QueueFullError,
    ResumeRefused,
    SessionError,
    SessionNotFoundError,
    UnsupportedOperation,
)

_encoder = msgspec.json.Encoder()


class Refusal(Exception):
    """The service refuses a request at its edge: answered as ``status`` with a JSON error body."""

    def __init__(self, status: int, kind: str, message: str, **detail: Any) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message
        self.detail = detail

    def response(self) -> Response:
        return error_response(self.status, self.kind, self.message, **self.detail)


def json_response(value: Any, status: int = 200) -> Response:
    return Response(_encoder.encode(value), status_code=status, media_type="application/json")


def error_response(status: int, kind: str, message: str, **detail: Any) -> Response:
    return json_response({"error": message, "type": kind, "detail": detail}, status)


def corral_error_response(exc: CorralError) -> Response:
    if isinstance(exc, IntentRefused):
        body = {
            "error": str(exc),
            "type": type(exc).__name__,
            "code": "intent_refused",
            "detail": {"adapter_id": exc.adapter_id, "intent": exc.intent, "reason": exc.reason},
        }
        return json_response(body, 422)
    if isinstance(exc, AdapterUnverified):
        return error_response(409, "adapter_unverified", str(exc), adapter_id=exc.adapter_id)
    if isinstance(exc, ResumeRefused):
        body = {
            "error": redact(f"{exc}; {exc.offer}"),
            "type": type(exc).__name__,
            "code": exc.code,
            "detail": {"session_id": exc.session_id, "offer": exc.offer},
        }
        return json_response(body, 409)
    if isinstance(exc, UnsupportedOperation):
        return error_response(
            422, type(exc).__name__, str(exc), adapter_id=exc.adapter_id, operation=exc.operation
        )
    if isinstance(exc, SessionNotFoundError | AdapterNotFoundError | PromptNotFoundError):
        status = 404
    elif isinstance(exc, QueueFullError):
        return error_response(429, type(exc).__name__, str(exc), limit=exc.limit)
    elif isinstance(exc, QueueError):
        return error_response(409, type(exc).__name__, str(exc), prompt_id=exc.prompt_id)
    elif isinstance(exc, SessionError):
        status = 409
    elif isinstance(exc, ConfigError):
        status = 400
    else:
        status = 500
    return error_response(status, type(exc).__name__, redact(str(exc)))
