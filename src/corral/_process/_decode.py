"""Decoding one line of agent output as JSON, raising one exception type only.

``msgspec`` decodes the lines corral sees every day. What it refuses falls back to the standard
library, which accepts what real agents do print and ``msgspec`` does not: surrogate escapes that
are not a pair (a model stream split an emoji between two lines) and invalid UTF-8 (decoded with
U+FFFD). Nesting beyond :data:`MAX_DEPTH` is refused, because the store could not read it back.
Whatever goes wrong, including ``RecursionError``, is raised as :class:`BadJson`.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from ..events._fields import _Clean

MAX_DEPTH = 512
"""Deepest nesting accepted (``corral.events`` keeps the same bound)."""

_decode = msgspec.json.Decoder().decode
_SHALLOW = 2 * MAX_DEPTH
"""A line this short cannot nest deeper than MAX_DEPTH: each level takes two bytes."""


class BadJson(ValueError):
    """A line that is not one JSON value corral can keep; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def loads(data: bytes | str) -> Any:
    """The JSON value in ``data``; raises only :class:`BadJson`."""
    try:
        value = _decode(data)
    except RecursionError:
        raise BadJson(f"nested deeper than {MAX_DEPTH} levels") from None
    except msgspec.DecodeError as exc:
        value = _fallback(data, exc)
        if len(data) > _SHALLOW and _too_deep(data, value):
            raise BadJson(f"nested deeper than {MAX_DEPTH} levels") from None
        return value
    if len(data) > _SHALLOW and _too_deep(data, value):
        raise BadJson(f"nested deeper than {MAX_DEPTH} levels")
    _Clean.value = value  # storable as it is: see corral.events._fields.mark_clean
    return value


def _fallback(data: bytes | str, first: msgspec.DecodeError) -> Any:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    if "\\u" not in text and (isinstance(data, str) or "\ufffd" not in text):
        raise BadJson(str(first)) from None
    try:
        return json.loads(text)
    except RecursionError:
        raise BadJson(f"nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:
        raise BadJson(str(exc)) from None


def _too_deep(data: bytes | str, value: Any) -> bool:
    if isinstance(data, str):
        brackets = data.count("[") + data.count("{")
    else:
        brackets = data.count(b"[") + data.count(b"{")
    return brackets > MAX_DEPTH and _depth(value, MAX_DEPTH) > MAX_DEPTH


def _depth(value: Any, limit: int) -> int:
    """Nesting depth of ``value``, counted only as far as ``limit + 1``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if level > deepest:
            deepest = level
            if deepest > limit:
                return deepest
        stack.extend((child, level + 1) for child in children)
    return deepest
