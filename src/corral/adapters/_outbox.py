"""The queue a driver's ``stream()`` reads: events in order, ending with one ``SessionEnded``.

Drivers that parse in a reader task (Pi, the Hermes gateway, the shell grade) put what the
parser made here; nothing reaches the queue after the session's end, every event is made
storable first, and usage reports are added to ``_usage`` when the driver keeps totals.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from ..events import EndReason, Event, SessionEnded, Usage
from ..events._text import storable
from ._usage import UsageTotals


class EventOutbox:
    """Mixin for an adapter: set ``_queue`` and ``_ended`` (and ``_usage``) in ``__init__``."""

    _queue: asyncio.Queue[Event]
    _ended: bool
    _usage: UsageTotals | None = None

    def _emit(self, events: list[Event]) -> None:
        for event in events:
            if not self._ended:
                self._queue.put_nowait(storable(event))

    def _end(self, reason: EndReason, code: int | None, tail: str | None) -> None:
        if not self._ended:
            self._queue.put_nowait(SessionEnded(reason=reason, exit_code=code, stderr_tail=tail))
            self._ended = True

    async def stream(self) -> AsyncIterator[Event]:
        while True:
            event = await self._queue.get()
            if isinstance(event, Usage) and self._usage is not None:
                self._usage.add(event)
            yield event
            if isinstance(event, SessionEnded):
                return
