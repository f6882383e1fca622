"""``json.loads`` for a small file read before ``corral run`` starts its agent, without ``json``.

Importing ``json`` imports ``re`` and ``enum`` and compiles the decoder's patterns: most of the
7 ms that finding the pinned install added before the agent's ``exec`` (its marker is JSON;
docs/performance.md, part 1, round 14, and decision 057). :func:`loads` gives the same value, and refuses the
same documents, with the scanner ``json`` itself runs: the C one of the ``_json`` module. Where
that module is missing (an interpreter without it), or the bytes are not plain UTF-8 (a BOM,
UTF-16 or UTF-32, which ``json.loads`` detects), it is ``json.loads`` itself.

A refused document raises :class:`ValueError` (``json.JSONDecodeError`` is one), as from
``json.loads``; the message may differ.
"""

from __future__ import annotations

TYPE_CHECKING = False  # ``typing`` itself costs start-up (decision 036)

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_WHITESPACE = " \t\n\r"  # json's WHITESPACE pattern, [ \t\n\r]*


class _Context:
    """What ``json.JSONDecoder()`` gives its scanner, as attributes the C scanner reads."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {
        "-Infinity": float("-inf"),
        "Infinity": float("inf"),
        "NaN": float("nan"),
    }.__getitem__


def _c_scanner() -> Callable[[str, int], tuple[Any, int]] | None:
    try:
        import _json
    except ImportError:  # pragma: no cover - CPython has it; loads falls back to json.loads
        return None
    # typeshed types the context as a scanner; the C code reads only the attributes above
    return _json.make_scanner(_Context())  # type: ignore[arg-type]


_scan = _c_scanner()


def _plain_utf8(data: bytes) -> bool:
    """True when ``json.loads`` would read ``data`` as UTF-8 without a BOM.

    ``json.detect_encoding`` looks at the first four bytes: a BOM, or a NUL of UTF-16 or UTF-32.
    Four ASCII bytes without a NUL are neither (a document whose start is not ASCII is left to
    ``json`` too: it is refused there, or it is a string starting with such a character)."""
    head = data[:4]
    return head.isascii() and b"\x00" not in head


def loads(data: bytes) -> Any:
    """The JSON document ``data`` holds, as ``json.loads(data)`` returns it."""
    if _scan is None or not _plain_utf8(data):
        import json

        return json.loads(data)
    text = data.decode("utf-8", "surrogatepass")  # what json.loads decodes UTF-8 bytes with
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration as stop:
        raise ValueError(f"Expecting value: char {stop.value}") from None
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"Extra data: char {end}")
    return value
