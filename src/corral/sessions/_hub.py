"""Fan-out of a session's envelopes to its observers, and the stale-result rule.

Several observers may follow one session (one writer, many observers). Each subscription first
replays the stored transcript after the observer's last ``seq``, then follows live envelopes; a
:class:`SeqGate` sits at the end so an observer never sees a ``seq`` twice nor goes backwards.

:meth:`Hub.follow_frames` is the same in encoded form, for the SSE streams (decision 040): each
envelope is formatted once per publish, whatever the number of observers, and an observer gets
every frame waiting for it as one batch. Publishing never waits for an observer: each one has a
bounded buffer (:data:`SUBSCRIBER_BUFFER` frames); an observer that falls that far behind is
*lagging*: its buffer is dropped and it catches up from the stored transcript after the last
``seq`` it got, then follows live again. So a slow observer holds at most its buffer, delays no
other, and still gets every envelope once, in order.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator, Callable

from ..events import Envelope, encode

SUBSCRIBER_BUFFER = 10_000
REPLAY_BATCH = 256
"""Stored frames sent as one batch at most when a frame observer replays."""


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


Frame = Callable[[Envelope, bytes], bytes]
"""Frames one envelope for the wire (the SSE message of :mod:`corral.server._sse`), given the
envelope and its JSON (``encode(envelope)``, computed once for the store and every frame)."""


class _Feed:
    """One frame observer's buffer: ``(seq, frame)`` pairs, bounded, drained in batches."""

    def __init__(self, frame: Frame, limit: int) -> None:
        self.frame = frame
        self.limit = limit
        self.frames: collections.deque[tuple[int, bytes]] = collections.deque()
        self.lagging = False
        self.closed = False
        self._waiter: asyncio.Future[None] | None = None

    def offer_frame(self, seq: int, data: bytes) -> None:
        if self.lagging:
            return
        if len(self.frames) >= self.limit:
            self.lagging = True  # caught up from the store; the buffer is of no use any more
            self.frames.clear()
        else:
            self.frames.append((seq, data))
        self._wake()

    def close(self) -> None:
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self, timeout: float | None) -> None:
        """Until there is something to take, the feed lags or closes, or ``timeout`` passes."""
        if self.frames or self.lagging or self.closed:
            return
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        timer = None if timeout is None else loop.call_later(timeout, _settle, waiter)
        try:
            await waiter
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()

    def take(self) -> list[tuple[int, bytes]]:
        frames = list(self.frames)
        self.frames.clear()
        return frames


def _settle(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class Hub:
    def __init__(self) -> None:
        self._subs: dict[str, set[_Subscriber | _Feed]] = {}
        self.taps: list[Callable[[Envelope], None]] = []
        """Called with every published envelope (the event board); a tap must never raise."""

    def publish(self, envelope: Envelope, data: bytes | None = None) -> None:
        """Hand ``envelope`` to every tap and observer; ``data`` is ``encode(envelope)`` when
        the caller has it already (the manager encodes once, for the store and the frames)."""
        for tap in self.taps:
            tap(envelope)
        subs = self._subs.get(envelope.session_id)
        if not subs:
            return
        encoded: dict[Frame, bytes] = {}  # each format once per envelope, for every observer
        for sub in list(subs):
            if isinstance(sub, _Feed):
                framed = encoded.get(sub.frame)
                if framed is None:
                    if data is None:
                        data = encode(envelope)
                    framed = encoded[sub.frame] = sub.frame(envelope, data)
                sub.offer_frame(envelope.seq, framed)
            else:
                sub.offer(envelope)

    def close(self) -> None:
        for subs in self._subs.values():
            for sub in subs:
                if isinstance(sub, _Feed):
                    sub.close()
                else:
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

    async def follow_frames(
        self,
        session_id: str,
        after: int,
        backlog: Callable[[int], list[Envelope]],
        frame: Frame,
        *,
        follow: bool = True,
        keepalive: float | None = None,
        limit: int = SUBSCRIBER_BUFFER,
    ) -> AsyncIterator[list[bytes]]:
        """Frames of ``session_id`` with ``seq > after``, in batches: the stored ones, then live
        ones as they come (every frame waiting is one batch). An empty batch: ``keepalive``
        seconds passed without a frame. A lagging observer catches up from ``backlog``."""
        last = after
        while True:
            feed = _Feed(frame, limit)
            self._subs.setdefault(session_id, set()).add(feed)
            try:
                # Registered before reading the backlog, so nothing falls between the two.
                replay: list[bytes] = []
                for env in backlog(last):
                    if env.seq > last:
                        last = env.seq
                        replay.append(frame(env, encode(env)))
                for start in range(0, len(replay), REPLAY_BATCH):
                    yield replay[start : start + REPLAY_BATCH]
                if not follow:
                    return
                while True:
                    await feed.wait(keepalive)
                    if feed.lagging and not feed.closed:
                        break  # catch up from the store after ``last``, then follow again
                    batch: list[bytes] = []
                    for seq, data in feed.take():
                        if seq > last:
                            last = seq
                            batch.append(data)
                    if batch or not feed.closed:
                        yield batch  # empty: a keepalive
                    else:
                        return
            finally:
                self._subs[session_id].discard(feed)
