"""Fan-out of a session's envelopes to its observers, and the stale-result rule.

Several observers may follow one session (one writer, many observers). Each subscription first
replays the stored transcript after the observer's last ``seq``, then follows live envelopes; a
:class:`SeqGate` sits at the end so an observer never sees a ``seq`` twice nor goes backwards.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from ..events import Envelope

SUBSCRIBER_BUFFER = 10_000


class SeqGate:
    """The stale-result rule: a consumer that already holds ``seq`` N drops anything ≤ N.

    Asynchronous results (a replay racing live delivery, a reconnecting stream, a late parse) can
    arrive out of order; an older update must never overwrite a newer state.
    """

    def __init__(self, last_seq: int = 0) -> None:
        self.last_seq = last_seq

    def accept(self, envelope: Envelope) -> bool:
        if envelope.seq <= self.last_seq:
            return False
        self.last_seq = envelope.seq
        return True


class _Subscriber:
    def __init__(self) -> None:
        self.queue: asyncio.Queue[Envelope | None] = asyncio.Queue(SUBSCRIBER_BUFFER)
        self.overflowed = False

    def offer(self, envelope: Envelope | None) -> None:
        try:
            self.queue.put_nowait(envelope)
        except asyncio.QueueFull:
            # A stalled observer is cut off rather than growing memory; it resumes by seq.
            self.overflowed = True


class Hub:
    def __init__(self) -> None:
        self._subs: dict[str, set[_Subscriber]] = {}
        self.taps: list[Callable[[Envelope], None]] = []
        """Called with every published envelope (the event board); a tap must never raise."""

    def publish(self, envelope: Envelope) -> None:
        for tap in self.taps:
            tap(envelope)
        for sub in list(self._subs.get(envelope.session_id, ())):
            sub.offer(envelope)

    def close(self) -> None:
        for subs in self._subs.values():
            for sub in subs:
                sub.offer(None)

    def observers(self, session_id: str) -> int:
        return len(self._subs.get(session_id, ()))

    async def subscribe(
        self,
        session_id: str,
        after: int,
        backlog: Callable[[int], list[Envelope]],
        *,
        follow: bool = True,
    ) -> AsyncIterator[Envelope]:
        """Envelopes of ``session_id`` with ``seq > after``: stored ones, then live ones."""
        sub = _Subscriber()
        self._subs.setdefault(session_id, set()).add(sub)
        gate = SeqGate(after)
        try:
            # Registered before reading the backlog, so nothing falls between the two.
            for env in backlog(after):
                if gate.accept(env):
                    yield env
            if not follow:
                return
            while not sub.overflowed:
                live = await sub.queue.get()
                if live is None:
                    return
                if gate.accept(live):
                    yield live
        finally:
            self._subs[session_id].discard(sub)
