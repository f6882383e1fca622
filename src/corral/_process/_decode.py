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

from ..events._text import mark_clean

MAX_DEPTH = 512
"""Deepest nesting accepted (``corral.events`` keeps the same bound)."""

_decoder = msgspec.json.Decoder()


class BadJson(ValueError):
    """A line that is not one JSON value corral can keep; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def loads(data: bytes | str) -> Any:
    """The JSON value in ``data``; raises only :class:`BadJson`."""
    try:
        value = _decoder.decode(data)
    except RecursionError:
        raise BadJson(f"nested deeper than {MAX_DEPTH} levels") from None
    except msgspec.DecodeError as exc:
        value = _fallback(data, exc)
        clean = False
    else:
        clean = True
    if _may_be_deep(data) and _depth(value, MAX_DEPTH) > MAX_DEPTH:
        raise BadJson(f"nested deeper than {MAX_DEPTH} levels")
    if clean:
        mark_clean(value)
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


def _may_be_deep(data: bytes | str) -> bool:
    if len(data) <= 2 * MAX_DEPTH:  # each level takes an opening and a closing byte
        return False
    if isinstance(data, str):
        return data.count("[") + data.count("{") > MAX_DEPTH
    return data.count(b"[") + data.count(b"{") > MAX_DEPTH


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
