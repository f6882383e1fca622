"""Text and events that are always storable: lone surrogates repaired, deep nesting bounded.

Agent output reaches corral as JSON, and JSON can spell things a UTF-8 store cannot hold: a
``\\ud83d`` escape without its low half decodes to a lone surrogate, which ``msgspec`` refuses to
encode. Three tools keep that out of events:

* :func:`repair_text` joins surrogate pairs written as two code points and replaces every lone
  surrogate with U+FFFD.
* :class:`SurrogateJoiner` is for a stream of text deltas. A model stream may split one emoji's
  surrogate pair across two deltas (``"A\\ud83d"`` then ``"\\ude00B"``); the joiner holds a
  trailing high surrogate back and puts it in front of the next delta of the same stream, so the
  pair becomes the right character. A parser that knows where a stream ends calls ``flush`` there,
  so a half that was never completed still shows as U+FFFD; elsewhere the complete text, which the
  protocol sends separately, shows it.
* :func:`storable` is the last check on every event a parser makes: it encodes the event; when
  that fails (lone surrogates, nesting beyond what the store can read back, a field of the wrong
  type) it repairs the strings, cuts the nesting and rebuilds the event, and when even that is not
  a valid event it returns an ``Error`` that keeps the repaired payload.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ._fields import fields_ok
from ._model import ErrorEvent, Event

CUT_DEPTH = 64
"""How deep a repaired payload is kept when it was too deep to store."""
_CUT = "…"


def repair_text(text: str) -> str:
    """``text`` with surrogate pairs joined and lone surrogates replaced by U+FFFD."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def _is_high(char: str) -> bool:
    return "\ud800" <= char <= "\udbff"


class SurrogateJoiner:
    """Joins surrogate pairs split across the deltas of one or more text streams (keyed)."""

    def __init__(self) -> None:
        self._held: dict[Any, str] = {}

    def join(self, text: Any, key: Any = None) -> str:
        """The delta to emit for ``text`` (a non-string counts as empty) in stream ``key``."""
        chunk: str = text if type(text) is str else ""
        if self._held:
            held = self._held.pop(key, None)
            if held is not None:
                chunk = held + chunk
        if chunk.isascii():  # the usual delta: no surrogate to hold or repair (an O(1) test)
            return chunk
        if _is_high(chunk[-1]):
            self._held[key] = chunk[-1]
            chunk = chunk[:-1]
        return repair_text(chunk)

    def flush(self, key: Any = None) -> str:
        """Stream ``key`` ended: U+FFFD for a first half still held, else ``""``."""
        return "\ufffd" if self._held.pop(key, None) is not None else ""


def scrub(value: Any, depth: int = CUT_DEPTH) -> Any:
    """A copy of a JSON-like value the store can hold: strings repaired, keys made strings,
    integers outside 64 bits made floats, nesting below ``depth`` replaced by ``"…"``."""
    if isinstance(value, str):
        return repair_text(value)
    if value is None or isinstance(value, bool | float):
        return value
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**64 else float(value)
    if depth <= 0:
        return _CUT
    if isinstance(value, dict):
        return {
            repair_text(k) if isinstance(k, str) else str(k): scrub(v, depth - 1)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [scrub(v, depth - 1) for v in value]
    if isinstance(value, msgspec.Struct):
        return scrub(msgspec.structs.asdict(value), depth)
    return repair_text(str(value))


def storable(event: Event) -> Event:
    """``event`` if the store can encode it and read it back as the same type; else a repair."""
    if fields_ok(event):
        return event
    return _rebuilt(event)


def _rebuilt(event: Event) -> Event:
    fields = scrub(msgspec.structs.asdict(event), CUT_DEPTH + 1)
    tag = event.__struct_config__.tag
    fields["type"] = tag
    defaults = _defaults(type(event))
    for _ in range(len(fields)):
        try:
            rebuilt: Event = msgspec.convert(fields, Event)
        except msgspec.ValidationError as exc:
            # A field of the wrong type: an optional one is dropped, a required text made empty.
            name = _field_of(str(exc))
            if name is None or name not in fields or name in ("type", "raw"):
                break
            if name in defaults:
                del fields[name]
            elif isinstance(fields[name], str) or fields[name] == "":
                break
            else:
                fields[name] = ""
            continue
        return rebuilt
    return ErrorEvent(
        message=f"corral could not make a valid {tag} event of the agent's output",
        code="invalid_event",
        raw=fields.get("raw"),
    )


def _defaults(cls: type[Event]) -> set[str]:
    info = msgspec.structs.fields(cls)
    return {f.name for f in info if f.required is False}


def _field_of(message: str) -> str | None:
    """The top-level field a ``ValidationError`` names (``… - at `$.name…```)."""
    marker = "at `$."
    at = message.rfind(marker)
    if at < 0:
        return None
    rest = message[at + len(marker) :]
    end = len(rest)
    for stop in ("`", ".", "["):
        cut = rest.find(stop)
        if 0 <= cut < end:
            end = cut
    return rest[:end] or None


def storable_all(events: list[Event]) -> list[Event]:
    """:func:`storable` over a parser's events for one line."""
    return [storable(e) for e in events]
