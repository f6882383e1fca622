"""Validation of what is POSTed to the board: schema v1 events and corral's own envelopes.

The v1 schema is closed: ``v`` must be ``1``, ``kind`` one of the fourteen kinds, the text fields
strings within their caps, ``ok``/``running`` booleans, and a field outside the schema is refused by
name. An envelope (``session_id``, ``seq``, ``event``) is decoded with the event model and projected
through :class:`~corral.events.board.BoardProjector`; an envelope that is not board material (a
text delta, a usage report) is answered as such, never dropped without a word.

Everything here is a total function of its input: anything wrong raises :class:`InvalidEvent`
with the reason and the path of the offending field; nothing else escapes.
"""

from __future__ import annotations

import json
from typing import Any, get_args

import msgspec

from ..events import Envelope, decode_envelope
from ..events.board import BoardEvent, BoardKind, BoardProjector

KINDS: frozenset[str] = frozenset(get_args(BoardKind))
"""The v1 kinds, in the order seed 002 lists them."""

FIELDS = frozenset(BoardEvent.__struct_fields__)

CAPS: dict[str, int] = {
    "session": 200,
    "summary": 2000,
    "file": 2000,
    "cmd": 4000,
    "detail": 16000,
    "agent": 200,
    "task": 500,
}
"""Longest accepted value of each text field, in characters; longer is refused, not truncated."""

MAX_BATCH = 1000


class InvalidEvent(ValueError):
    """A POSTed value that is not a valid board event; ``path`` names the offending field."""

    def __init__(self, reason: str, path: str = "$") -> None:
        super().__init__(f"{reason} (at {path})")
        self.reason = reason
        self.path = path


def _check_v1(raw: dict[str, Any], path: str) -> BoardEvent:
    unknown = sorted(set(raw) - FIELDS)
    if unknown:
        raise InvalidEvent(f"unknown field {unknown[0]!r} in a v1 event", f"{path}.{unknown[0]}")
    if type(raw.get("v")) is not int or raw["v"] != 1:
        raise InvalidEvent("schema version must be 1", f"{path}.v")
    for name in ("session", "kind", "summary"):
        if name not in raw:
            raise InvalidEvent(f"missing required field {name!r}", path)
    for name, cap in CAPS.items():
        value = raw.get(name)
        if value is None:
            continue
        if not isinstance(value, str):
            raise InvalidEvent(f"{name} must be a string", f"{path}.{name}")
        if len(value) > cap:
            raise InvalidEvent(f"{name} longer than {cap} characters", f"{path}.{name}")
        if name in ("session", "summary") and not value.strip():
            raise InvalidEvent(f"{name} must not be empty", f"{path}.{name}")
    kind = raw["kind"]
    if not isinstance(kind, str) or kind not in KINDS:
        raise InvalidEvent(f"unknown kind {kind!r}"[:200], f"{path}.kind")
    for name in ("ok", "running"):
        if raw.get(name) is not None and not isinstance(raw[name], bool):
            raise InvalidEvent(f"{name} must be a boolean", f"{path}.{name}")
    try:
        return msgspec.convert(raw, BoardEvent)
    except msgspec.ValidationError as exc:  # pragma: no cover - the checks above are stricter
        raise InvalidEvent(str(exc), path) from exc


def _repair(text: str) -> str:
    # A lone surrogate cannot be encoded as UTF-8; it is replaced rather than refused.
    return text if text.isascii() else text.encode("utf-8", "replace").decode("utf-8")


def _sanitize(raw: dict[str, Any]) -> dict[str, Any]:
    return {k: _repair(v) if isinstance(v, str) else v for k, v in raw.items()}


def is_envelope(raw: dict[str, Any]) -> bool:
    return "v" not in raw and {"session_id", "seq", "event"} <= set(raw)


def parse_body(body: bytes) -> list[dict[str, Any]]:
    """The JSON objects of a POST body: one object, or a list of them (a batch)."""
    try:
        value = msgspec.json.decode(body)
    except msgspec.DecodeError as exc:
        # msgspec refuses escaped lone surrogates; the stdlib decodes them and they are repaired.
        try:
            value = json.loads(body)
        except (ValueError, RecursionError):
            raise InvalidEvent(f"body is not JSON: {exc}") from exc
    items = value if isinstance(value, list) else [value]
    if not items:
        raise InvalidEvent("empty batch")
    if len(items) > MAX_BATCH:
        raise InvalidEvent(f"a batch holds at most {MAX_BATCH} events")
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            where = f"$[{i}]" if isinstance(value, list) else "$"
            raise InvalidEvent("an event must be a JSON object", where)
    return items


class Ingestor:
    """Turns POSTed objects into board events; keeps one projector per envelope session."""

    def __init__(self) -> None:
        self._projectors: dict[str, BoardProjector] = {}

    def validate(self, raw: dict[str, Any], path: str = "$") -> BoardEvent:
        """A v1 event, checked; raises :class:`InvalidEvent`."""
        return _check_v1(_sanitize(raw), path)

    def envelope(self, raw: dict[str, Any], path: str = "$") -> Envelope:
        try:
            return decode_envelope(msgspec.json.encode(raw))
        except Exception as exc:  # any shape of garbage is a refusal, never a crash
            raise InvalidEvent(f"not a corral envelope: {exc!r}", path) from exc

    def project(
        self, envelope: Envelope, *, agent: str | None = None, task: str | None = None
    ) -> BoardEvent | None:
        """The board event of ``envelope`` (``None`` when it is not board material)."""
        projector = self._projectors.get(envelope.session_id)
        if projector is None:
            projector = self._projectors[envelope.session_id] = BoardProjector(
                agent=agent, task=task
            )
        try:
            event = projector.project(envelope)
        except Exception:  # a projection bug must not take ingestion down
            return None
        if event is not None and event.kind == "end":
            self._projectors.pop(envelope.session_id, None)
        return event
