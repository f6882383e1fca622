"""Size limits of ``corral serve``, answered with 413.

Two layers, both configurable (:class:`Limits`, ``CORRAL_MAX_*`` variables):

* :class:`BodyLimit` (ASGI middleware) counts the bytes of the request body *as they stream in*; a
  declared ``Content-Length`` over the limit is refused before anything is read, and a chunked or
  lying body is cut off at the limit. Nothing larger than ``max_body_bytes`` is ever buffered.
* :func:`check_fields` walks a decoded body (structs, dicts, lists) and refuses any string longer
  than ``max_text_bytes`` (UTF-8) or any bytes value (an uploaded attachment) longer than
  ``max_attachment_bytes``, naming the field. Every request body of the API goes through it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ._responses import Refusal, error_response

MiB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    max_body_bytes: int = 32 * MiB
    """A whole request body (uploaded images arrive base64-encoded inside it)."""
    max_text_bytes: int = 1 * MiB
    """Any one string field: a prompt, a draft, a model name."""
    max_attachment_bytes: int = 20 * MiB
    """Any one uploaded attachment, decoded."""


class _TooLarge(Exception):
    pass


class BodyLimit:
    """Refuse request bodies over ``max_bytes`` with 413, counting what actually arrives."""

    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None:
            try:
                too_big = int(declared) > self.max_bytes
            except ValueError:
                too_big = False  # the server rejects a malformed length itself
            if too_big:
                await self._refuse(scope, receive, send)
                return
        received = 0
        started = False

        async def limited() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise _TooLarge
            return message

        async def tracked(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited, tracked)
        except _TooLarge:
            if started:
                raise
            await self._refuse(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = error_response(
            413, "payload_too_large", "the request body is too large", limit=self.max_bytes
        )
        await response(scope, receive, send)


MAX_DEPTH = 32
"""Deeper nesting than any API body has is refused (422) rather than walked."""


def check_fields(value: Any, limits: Limits, path: str = "body", depth: int = 0) -> None:
    """Raise a 413 :class:`Refusal` naming the first string/bytes field over its limit."""
    if depth > MAX_DEPTH:
        raise Refusal(422, "ValidationError", f"{path} is nested too deeply")
    if isinstance(value, str):
        limit = limits.max_text_bytes
        if len(value) > limit or (
            len(value) * 4 > limit and len(value.encode("utf-8", "surrogatepass")) > limit
        ):
            raise _field(path, limit)
    elif isinstance(value, bytes | bytearray):
        if len(value) > limits.max_attachment_bytes:
            raise _field(path, limits.max_attachment_bytes)
    elif isinstance(value, msgspec.Struct):
        for name in value.__struct_fields__:
            check_fields(getattr(value, name), limits, f"{path}.{name}", depth + 1)
    elif isinstance(value, dict):
        for key, item in value.items():
            check_fields(key, limits, f"{path}.<key>", depth + 1)
            check_fields(item, limits, f"{path}.{key}", depth + 1)
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            check_fields(item, limits, f"{path}[{i}]", depth + 1)


def _field(path: str, limit: int) -> Refusal:
    field = path.removeprefix("body.")
    return Refusal(
        413, "field_too_large", f"field {field!r} is too large", field=field, limit=limit
    )
