"""Server-sent events: an incremental decoder for upstream bytes and the frame encoder.

The decoder is a pure function of the bytes fed so far (no I/O), so it is tested on recorded
streams. A line longer than ``max_line`` is an error, never unbounded memory.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from .._process._decode import loads as _shared_loads

MAX_LINE = 8 * 1024 * 1024


class SSEError(ValueError):
    pass


class SSEDecoder:
    """``feed(bytes) -> [(event, data)]``; ``event`` is "" when the frame named none."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self._buffer = b""
        self._event = ""
        self._data: list[str] = []
        self._max = max_line

    def feed(self, chunk: bytes) -> list[tuple[str, str]]:
        self._buffer += chunk
        out: list[tuple[str, str]] = []
        while True:
            cut = self._buffer.find(b"\n")
            if cut < 0:
                if len(self._buffer) > self._max:
                    raise SSEError(f"an SSE line is longer than {self._max} bytes")
                return out
            line = self._buffer[:cut].rstrip(b"\r").decode("utf-8", "replace")
            self._buffer = self._buffer[cut + 1 :]
            if not line:
                if self._data:
                    out.append((self._event, "\n".join(self._data)))
                self._event, self._data = "", []
            elif line.startswith("data:"):
                self._data.append(line[5:].removeprefix(" "))
            elif line.startswith("event:"):
                self._event = line[6:].strip()
            # id:, retry: and comments carry nothing a model stream needs.

    def finish(self) -> list[tuple[str, str]]:
        """A last frame the upstream did not end with a blank line."""
        out = self.feed(b"\n\n") if self._buffer.strip() or self._data else []
        self._buffer = b""
        return out


def frame(data: Any, event: str | None = None) -> bytes:
    payload = data.encode() if isinstance(data, str) else encode(data)
    if event:
        return b"event: " + event.encode() + b"\ndata: " + payload + b"\n\n"
    return b"data: " + payload + b"\n\n"


def encode(value: Any) -> bytes:
    """Compact JSON bytes; text with lone surrogates goes out escaped instead of failing."""
    try:
        return _encode(value)
    except (UnicodeEncodeError, TypeError, OverflowError):
        return json.dumps(value, separators=(",", ":"), default=str).encode()


def dumps(value: Any) -> str:
    return encode(value).decode()


def loads(data: bytes | str) -> Any:
    """JSON from bytes or text; raises only ``ValueError`` (:class:`corral._process.BadJson`).

    The one decoder every driver uses: lone surrogates and invalid UTF-8 are read, and nesting past
    its depth limit is refused instead of raising ``RecursionError`` past the proxy's handlers."""
    return _shared_loads(data)


def loads_object(data: bytes | str) -> dict[str, Any] | None:
    """A JSON object from a data line, or None for anything else (never raises)."""
    try:
        value = loads(data)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode
