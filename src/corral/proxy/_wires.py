"""The converter table: one entry per wire API, the same functions for each (2N, not N²)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from . import _anthropic, _chat, _google, _responses, _responses_stream
from . import _ir as ir


class Decoder(Protocol):
    def feed(self, event: str, data: str) -> list[ir.Event]: ...
    def finish(self) -> list[ir.Event]: ...


class Encoder(Protocol):
    def encode(self, event: ir.Event) -> bytes: ...


class _Total:
    """A decoder that never raises: an event it cannot read ends the stream with an error."""

    def __init__(self, inner: Decoder) -> None:
        self._inner = inner
        self._failed = False

    def _guard(self, produce: Callable[[], list[ir.Event]]) -> list[ir.Event]:
        if self._failed:
            return []
        try:
            return produce()
        except (AttributeError, KeyError, TypeError, ValueError, IndexError) as exc:
            self._failed = True
            message = f"the upstream sent an event the proxy cannot read: {exc!r}"
            return [ir.Failure(ir.ErrorInfo("server", message, 502))]

    def feed(self, event: str, data: str) -> list[ir.Event]:
        return self._guard(lambda: self._inner.feed(event, data))

    def finish(self) -> list[ir.Event]:
        return self._guard(self._inner.finish)


def total(factory: Callable[[], Decoder]) -> Callable[[], Decoder]:
    return lambda: _Total(factory())


@dataclass(frozen=True)
class Converter:
    wire: ir.Wire
    parse_request: Callable[[dict[str, Any], str, bool], ir.Request]
    """(body, model from the path, stream from the path) → request; path values matter for Google."""
    build_request: Callable[[ir.Request, str], dict[str, Any]]
    parse_response: Callable[[dict[str, Any]], ir.Response]
    render_response: Callable[[ir.Response, str, ir.Request], dict[str, Any]]
    decoder: Callable[[], Decoder]
    encoder: Callable[[str, ir.Request], Encoder]
    render_error: Callable[[ir.ErrorInfo], tuple[int, dict[str, Any]]]
    stream_error: Callable[[ir.ErrorInfo], bytes]
    parse_error: Callable[[int, Any, float | None], ir.ErrorInfo]


CONVERTERS: dict[ir.Wire, Converter] = {
    "anthropic": Converter(
        "anthropic",
        lambda body, model, stream: _anthropic.parse_request(body),
        _anthropic.build_request,
        _anthropic.parse_response,
        lambda resp, model, req: _anthropic.render_response(resp, model),
        total(_anthropic.Decoder),
        _anthropic.Encoder,
        _anthropic.render_error,
        _anthropic.stream_error,
        _anthropic.parse_error,
    ),
    "openai-chat": Converter(
        "openai-chat",
        lambda body, model, stream: _chat.parse_request(body),
        _chat.build_request,
        _chat.parse_response,
        lambda resp, model, req: _chat.render_response(resp, model),
        total(_chat.Decoder),
        _chat.Encoder,
        _chat.render_error,
        _chat.stream_error,
        _chat.parse_error,
    ),
    "openai-responses": Converter(
        "openai-responses",
        lambda body, model, stream: _responses.parse_request(body),
        _responses.build_request,
        _responses.parse_response,
        _responses.render_response,
        total(_responses_stream.Decoder),
        _responses_stream.Encoder,
        _responses.render_error,
        lambda error: _responses.stream_error(error),
        _responses.parse_error,
    ),
    "google": Converter(
        "google",
        _google.parse_request,
        _google.build_request,
        _google.parse_response,
        lambda resp, model, req: _google.render_response(resp, model),
        total(_google.Decoder),
        _google.Encoder,
        _google.render_error,
        _google.stream_error,
        _google.parse_error,
    ),
}


def converter(wire: ir.Wire) -> Converter:
    return CONVERTERS[wire]
