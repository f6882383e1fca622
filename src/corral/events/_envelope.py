"""The envelope: the identity the session layer gives each event, and the JSON codec for both."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import msgspec

from ._model import EVENT_TAGS, Event, UnknownEvent


class Envelope(msgspec.Struct, frozen=True, kw_only=True):
    """One event of one session, numbered. ``seq`` is per-session, strictly increasing from 1."""

    session_id: str
    seq: int
    ts: datetime
    source: str
    """Who produced the event: an adapter id, or ``corral`` for events the session layer made."""
    event: Event


class Sequencer:
    """Hands out envelopes with a monotonic per-session ``seq``; clock injectable for tests."""

    def __init__(
        self,
        session_id: str,
        source: str,
        *,
        start: int = 0,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.session_id = session_id
        self.source = source
        self._counter = itertools.count(start + 1)
        self._clock = clock or (lambda: datetime.now(UTC))

    def wrap(self, event: Event, *, source: str | None = None) -> Envelope:
        return Envelope(
            session_id=self.session_id,
            seq=next(self._counter),
            ts=self._clock(),
            source=source or self.source,
            event=event,
        )


_encoder = msgspec.json.Encoder()
_event_decoder: msgspec.json.Decoder[Event] = msgspec.json.Decoder(Event)


def encode(value: Event | Envelope) -> bytes:
    """JSON bytes for an event or an envelope."""
    return _encoder.encode(value)


def to_builtins(value: Event | Envelope) -> Any:
    """Plain JSON values (dicts, lists, str…) for an event or an envelope: ``encode``, decoded."""
    return msgspec.json.decode(_encoder.encode(value))


def event_from_builtins(obj: Any) -> Event:
    """An event from a decoded JSON object; an unknown or malformed ``type`` gives ``UnknownEvent``."""
    if isinstance(obj, dict):
        tag = obj.get("type")
        if isinstance(tag, str) and tag in EVENT_TAGS and tag != "unknown":
            try:
                event: Event = msgspec.convert(obj, Event)
                return event
            except msgspec.ValidationError:
                pass
        if tag == "unknown":
            return UnknownEvent(raw=obj.get("raw"), vendor_type=obj.get("vendor_type"))
        return UnknownEvent(raw=obj, vendor_type=tag if isinstance(tag, str) else None)
    return UnknownEvent(raw=obj)


def decode_event(data: bytes | str) -> Event:
    """Decode one JSON event, falling back to ``UnknownEvent`` rather than raising."""
    try:
        return _event_decoder.decode(data)
    except msgspec.ValidationError:
        return event_from_builtins(msgspec.json.decode(data))


def decode_envelope(data: bytes | str) -> Envelope:
    obj = msgspec.json.decode(data)
    event = event_from_builtins(obj.get("event"))
    return Envelope(
        session_id=obj["session_id"],
        seq=obj["seq"],
        ts=msgspec.convert(obj["ts"], datetime),
        source=obj["source"],
        event=event,
    )
