"""Whether the store can keep an event as it is: a fast check of every field against its type.

:func:`fields_ok` runs on every event a parser makes, so it is compiled once per event class into
one small function of plain ``type(v) is …`` tests (the way ``dataclasses`` builds ``__init__``).
Strings must be encodable as UTF-8 (no lone surrogate), integers must fit 64 bits, enums must hold
one of their values, ``Any`` fields (and ``raw``) must encode to JSON the store can read back. An
event with a structured field (a ``ToolResult``, a tuple of ``Question`` …) is also encoded without
its ``raw`` and decoded as its type.

``raw`` is usually the very object the drivers' decoder just read with ``msgspec``, which is
storable by construction: :func:`mark_clean` records it, and an identical ``raw`` is not encoded a
second time. A parser whose events keep a part of that object (JSON-RPC ``params``, an ACP
``update``) records the part with :func:`mark_part`, which it stays storable for the same reason.

A structured field holding exactly its declared struct types (a ``ToolResult`` of valid fields, a
tuple of valid ``PlanEntry``…) is checked the same way, field by field; anything else (a list for
a tuple, a dict for a struct) is decided by encoding the event and decoding it as its type.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

import msgspec

from ._model import EVENT_TYPES, Event

MAX_DEPTH = 512
"""Deepest JSON nesting kept; the store reads back up to 999 levels, envelope included."""
_INT_MIN, _INT_MAX = -(2**63), 2**64
_NONE = type(None)

_encoder = msgspec.json.Encoder()
_event_decoder: msgspec.json.Decoder[Event] = msgspec.json.Decoder(Event)
_ENCODE_ERRORS = (UnicodeEncodeError, RecursionError, TypeError, ValueError, OverflowError)


class _CleanValues:
    """The last value the drivers' decoder read with ``msgspec`` alone (valid UTF-8, no lone
    surrogate, depth checked), and a part of it a parser keeps as ``raw``. Holding them keeps
    their identities from being reused. (An instance, not class attributes: setting a class
    attribute for every line would invalidate the interpreter's attribute caches.)"""

    __slots__ = ("part", "value")

    def __init__(self) -> None:
        self.value: Any = None
        self.part: Any = None


_Clean = _CleanValues()


def mark_clean(value: Any) -> None:
    """Called by the decoder for a value ``msgspec`` decoded and whose depth it checked."""
    _Clean.value = value


def mark_part(part: Any, key: str, inner: str | None = None) -> None:
    """``part`` is storable as it is if it is ``clean[key]`` (or ``clean[key][inner]``) of the
    clean value: for a parser entry point the driver hands a piece of the line it decoded.
    Only an object or array counts (a bare integer still has its range checked)."""
    whole = _Clean.value
    if type(whole) is not dict or type(part) not in (dict, list):
        return
    found = whole.get(key)
    if inner is not None:
        found = found.get(inner) if type(found) is dict else None
    if found is part:
        _Clean.part = part


def text_ok(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def readable(data: bytes) -> bool:
    """Whether the store can decode ``data`` again (only deep nesting can stop it)."""
    if data.count(b"[") + data.count(b"{") < MAX_DEPTH:
        return True
    try:
        _event_decoder.decode(data)
    except (RecursionError, msgspec.DecodeError):
        return False
    return True


def value_ok(value: Any) -> bool:
    """Whether an ``Any`` field can be stored (no lone surrogate, nesting the store can read)."""
    kind = type(value)
    if kind is str:
        return text_ok(value)
    if value is None or kind in (float, bool):
        return True
    if kind is int:
        return bool(_INT_MIN <= value < _INT_MAX)
    try:
        return readable(_encoder.encode(value))
    except _ENCODE_ERRORS:
        return False


def _roundtrip(event: Event) -> bool:
    try:
        data = _encoder.encode(msgspec.structs.replace(event, raw=None))
        return type(_event_decoder.decode(data)) is type(event)
    except _ENCODE_ERRORS:
        return False
    except msgspec.ValidationError:
        return False


_STR = "type(v) is not str or not (v.isascii() or text_ok(v))"
_TESTS = {
    "str": _STR,
    "str?": f"v is not None and ({_STR})",
    "bool": "type(v) is not bool",
    "int?": "v is not None and (type(v) is not int or not (_INT_MIN <= v < _INT_MAX))",
    "float?": (
        "v is not None and type(v) is not float"
        " and (type(v) is not int or not (_INT_MIN <= v < _INT_MAX))"
    ),
    "enum": "type(v) is not {enum} and not (type(v) is str and v in {values})",
    "enum?": "v is not None and type(v) is not {enum} and not (type(v) is str and v in {values})",
    "any": "v is not None and v is not _Clean.value and v is not _Clean.part and not value_ok(v)",
}


def _kind(tp: Any) -> tuple[str, type[StrEnum] | None]:
    args = set(getattr(tp, "__args__", ()))
    enums = [a for a in args | {tp} if isinstance(a, type) and issubclass(a, StrEnum)]
    if tp is str:
        return "str", None
    if args == {str, _NONE}:
        return "str?", None
    if tp is bool:
        return "bool", None
    if args == {int, _NONE}:
        return "int?", None
    if args == {float, _NONE}:
        return "float?", None
    if isinstance(tp, type) and issubclass(tp, StrEnum):
        return "enum", tp
    if len(args) == 2 and _NONE in args and len(enums) == 1:
        return "enum?", enums[0]
    if tp is Any:
        return "any", None
    return "structured", None


def _tests(cls: type, namespace: dict[str, Any], prefix: str) -> tuple[list[str], list[str]]:
    """Lines returning ``False`` for a field ``cls`` cannot hold, and expressions true when a
    structured field is certainly valid (else the event is decided by a round trip)."""
    body: list[str] = []
    structured: list[str] = []
    for index, info in enumerate(msgspec.structs.fields(cls)):
        if info.name == "raw":
            continue
        name = f"{prefix}{index}"
        kind, enum = _kind(info.type)
        if kind == "structured":
            structured.append(_structured_test(info.type, namespace, name, info.name))
            continue
        test = _TESTS[kind]
        if enum is not None:
            namespace[f"_E{name}"] = enum
            namespace[f"_V{name}"] = frozenset(enum._value2member_map_)
            test = test.format(enum=f"_E{name}", values=f"_V{name}")
        body += [f"    v = e.{info.name}", f"    if {test}:", "        return False"]
    return body, structured


def _structured_test(tp: Any, namespace: dict[str, Any], name: str, field: str) -> str:
    """An expression over ``e`` true when field ``field`` of type ``tp`` holds exactly valid
    values of its declared struct types (``False`` when there is no such fast test)."""
    args = getattr(tp, "__args__", ())
    optional = _NONE in args
    inner = [a for a in args if a is not _NONE] if optional else [tp]
    if len(inner) != 1:
        return "False"
    target = inner[0]
    if getattr(target, "__origin__", None) is tuple and len(target.__args__) == 2:
        item, rest = target.__args__
        if rest is not Ellipsis or not _plain_struct(item):
            return "False"
        namespace[f"_T{name}"] = item
        namespace[f"_S{name}"] = _compile_plain(item)
        return (
            f"(type(e.{field}) is tuple"
            f" and all(type(x) is _T{name} and _S{name}(x) for x in e.{field}))"
        )
    if not _plain_struct(target):
        return "False"
    namespace[f"_T{name}"] = target
    namespace[f"_S{name}"] = _compile_plain(target)
    test = f"(type(e.{field}) is _T{name} and _S{name}(e.{field}))"
    return f"(e.{field} is None or {test})" if optional else test


def _plain_struct(tp: Any) -> bool:
    """A struct (not an event) whose fields all have fast tests."""
    if not (isinstance(tp, type) and issubclass(tp, msgspec.Struct)) or tp in EVENT_TYPES:
        return False
    return all(_kind(f.type)[0] != "structured" for f in msgspec.structs.fields(tp))


def _namespace() -> dict[str, Any]:
    return {
        "text_ok": text_ok,
        "value_ok": value_ok,
        "_roundtrip": _roundtrip,
        "_Clean": _Clean,
        "_INT_MIN": _INT_MIN,
        "_INT_MAX": _INT_MAX,
    }


def _compile_plain(cls: type) -> Callable[[Any], bool]:
    namespace = _namespace()
    body, _ = _tests(cls, namespace, "f")
    exec("def check(e):\n" + "\n".join([*body, "    return True"]), namespace)
    check: Callable[[Any], bool] = namespace["check"]
    return check


def _compile(cls: type) -> Callable[[Any], bool]:
    namespace = _namespace()
    body, structured = _tests(cls, namespace, "")
    body += [
        "    v = e.raw",
        "    if (v is not None and v is not _Clean.value and v is not _Clean.part"
        " and not value_ok(v)):",
        "        return False",
    ]
    if structured:
        body += [f"    if not ({' and '.join(structured)}):", "        return _roundtrip(e)"]
    exec("def check(e):\n" + "\n".join([*body, "    return True"]), namespace)
    check: Callable[[Any], bool] = namespace["check"]
    return check


_CHECKS: dict[type, Callable[[Any], bool]] = {}


def fields_ok(event: Event) -> bool:
    """Whether the store can encode ``event`` and read it back as the same type."""
    check = _CHECKS.get(type(event))
    if check is None:
        check = _CHECKS[type(event)] = _compile(type(event))
    return check(event)
