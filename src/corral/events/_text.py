"""Text and events that are always storable: lone surrogates repaired, deep nesting bounded.

Agent output reaches corral as JSON, and JSON can spell things a UTF-8 store cannot hold: a
``\\ud83d`` escape without its low half decodes to a lone surrogate, which ``msgspec`` refuses to
encode. Three tools keep that out of events:

* :func:`repair_text` joins surrogate pairs written as two code points and replaces every lone
  surrogate with U+FFFD.
* :class:`SurrogateJoiner` is for a stream of text deltas. A model stream may split one emoji's
  surrogate pair across two deltas (``"A\\ud83d"`` then ``"\\ude00B"``); the joiner holds a
  trailing high surrogate back and puts it in front of the next delta of the same stream, so the
  pair becomes the right character. A held half that is never completed is dropped from the deltas
  (the complete text, which every protocol also sends, shows it as U+FFFD).
* :func:`storable` is the last check on every event a parser makes: it encodes the event; when
  that fails (lone surrogates, nesting beyond what the store can read back, a field of the wrong
  type) it repairs the strings, cuts the nesting and rebuilds the event, and when even that is not
  a valid event it returns an ``Error`` that keeps the repaired payload.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

import msgspec

from ._model import Error, Event

MAX_DEPTH = 512
"""Deepest JSON nesting an event keeps; the store reads back up to 999 levels, envelope included."""
CUT_DEPTH = 64
"""How deep a repaired payload is kept when it was too deep to store."""
_CUT = "…"

_encoder = msgspec.json.Encoder()
_event_decoder: msgspec.json.Decoder[Event] = msgspec.json.Decoder(Event)
_ENCODE_ERRORS = (UnicodeEncodeError, RecursionError, TypeError, ValueError, OverflowError)


def repair_text(text: str) -> str:
    """``text`` with surrogate pairs joined and lone surrogates replaced by U+FFFD."""
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
        if type(text) is not str:
            text = ""
        held = self._held.pop(key, None) if self._held else None
        if held is not None:
            text = held + text
        if text and _is_high(text[-1]):
            self._held[key] = text[-1]
            text = text[:-1]
        return repair_text(text)

    def reset(self, key: Any = None) -> None:
        """Forget a half held for ``key`` (its stream ended)."""
        self._held.pop(key, None)


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


def _readable(data: bytes) -> bool:
    """Whether the store can decode ``data`` again (only deep nesting can stop it)."""
    if data.count(b"[") + data.count(b"{") < MAX_DEPTH:
        return True
    try:
        _event_decoder.decode(data)
    except RecursionError:
        return False
    except msgspec.DecodeError:
        return False
    return True


def storable(event: Event) -> Event:
    """``event`` if the store can encode it and read it back as the same type; else a repair."""
    if _fields_ok(event) and _raw_ok(event.raw):
        return event
    return _rebuilt(event)


class _Clean:
    """The last value the drivers' decoder read with ``msgspec`` alone: valid UTF-8, no lone
    surrogate, nesting checked. Holding it keeps its identity from being reused, so ``raw is``
    this value proves the payload storable without encoding it again."""

    value: Any = None


def mark_clean(value: Any) -> None:
    """Called by the decoder for a value ``msgspec`` decoded and whose depth it checked."""
    _Clean.value = value


def _raw_ok(raw: Any) -> bool:
    if raw is None or raw is _Clean.value:
        return True
    return _value_ok(raw)


def _value_ok(value: Any) -> bool:
    """Whether an ``Any`` field can be stored (no lone surrogate, nesting the store can read)."""
    kind = type(value)
    if kind is str:
        return _text_ok(value)
    if value is None or kind in (int, float, bool):
        return kind is not int or -(2**63) <= value < 2**64
    try:
        return _readable(_encoder.encode(value))
    except _ENCODE_ERRORS:
        return False


def _text_ok(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# How each field of each event type is checked: a fast Python test for the plain field types,
# a full encode-and-decode of the event (without ``raw``) when a field has a structured type.
_Validator = Callable[[Any], bool]
_PLANS: dict[type, tuple[tuple[tuple[str, _Validator], ...], bool]] = {}
_NONE = type(None)
_INT_MIN, _INT_MAX = -(2**63), 2**64


def _is_str(v: Any) -> bool:
    return type(v) is str and (v.isascii() or _text_ok(v))


def _is_opt_str(v: Any) -> bool:
    return v is None or (type(v) is str and (v.isascii() or _text_ok(v)))


def _is_bool(v: Any) -> bool:
    return type(v) is bool


def _is_opt_int(v: Any) -> bool:
    return v is None or (type(v) is int and _INT_MIN <= v < _INT_MAX)


def _is_opt_float(v: Any) -> bool:
    return v is None or type(v) is float or (type(v) is int and _INT_MIN <= v < _INT_MAX)


def _enum_check(enum: type[StrEnum], optional: bool) -> _Validator:
    values = enum._value2member_map_

    def check(v: Any) -> bool:
        return (optional and v is None) or type(v) is enum or (type(v) is str and v in values)

    return check


def _validator(tp: Any) -> _Validator | None:
    args = set(getattr(tp, "__args__", ()))
    if tp is str:
        return _is_str
    if args == {str, _NONE}:
        return _is_opt_str
    if tp is bool:
        return _is_bool
    if args == {int, _NONE}:
        return _is_opt_int
    if args == {float, _NONE}:
        return _is_opt_float
    if isinstance(tp, type) and issubclass(tp, StrEnum):
        return _enum_check(tp, False)
    enums = [a for a in args if isinstance(a, type) and issubclass(a, StrEnum)]
    if len(args) == 2 and _NONE in args and len(enums) == 1:
        return _enum_check(enums[0], True)
    if tp is Any:
        return _value_ok
    return None


def _plan(cls: type) -> tuple[tuple[tuple[str, _Validator], ...], bool]:
    checks: list[tuple[str, _Validator]] = []
    structured = False
    for info in msgspec.structs.fields(cls):
        if info.name == "raw":
            continue
        check = _validator(info.type)
        if check is None:
            structured = True
        else:
            checks.append((info.name, check))
    plan = _PLANS[cls] = (tuple(checks), structured)
    return plan


def _fields_ok(event: Event) -> bool:
    checks, structured = _PLANS.get(type(event)) or _plan(type(event))
    for name, check in checks:
        if not check(getattr(event, name)):
            return False
    if not structured:
        return True
    try:
        data = _encoder.encode(msgspec.structs.replace(event, raw=None))
        return type(_event_decoder.decode(data)) is type(event)
    except _ENCODE_ERRORS:
        return False
    except msgspec.ValidationError:
        return False


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
    return Error(
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
