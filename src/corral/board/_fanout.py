"""Fan-out of board events to SSE viewers: ingestion never waits for a viewer.

Each viewer has a bounded queue (:data:`VIEWER_QUEUE`). Publishing is ``put_nowait``: when a
viewer's queue is full it is marked *lagging* and gets nothing more live. Its stream then tells it
(``event: missed`` with the last id it had and the board's latest id), replays what it missed from
the store, and goes live again. Delivery to a viewer is therefore at-least-once in the store's id
order and never out of order: a gate drops any id at or below the last one sent. Events pruned from
the store before a lagging viewer caught up are lost to that viewer, and the ``missed`` message says
from where.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from ._store import StoredEvent

VIEWER_QUEUE = 2048


class Filter:
    """Which events a viewer wants; ``None`` matches anything."""

    def __init__(
        self,
        *,
        agent: str | None = None,
        task: str | None = None,
        kind: str | None = None,
        session: str | None = None,
    ) -> None:
        self.agent, self.task, self.kind, self.session = agent, task, kind, session

    def match(self, event: StoredEvent) -> bool:
        return (
            (self.agent is None or event.agent == self.agent)
            and (self.task is None or event.task == self.task)
            and (self.kind is None or event.kind == self.kind)
            and (self.session is None or event.session == self.session)
        )


class Missed:
    """Sent to a viewer that fell behind: it had ``after``; the board was at ``latest``."""

    def __init__(self, after: int, latest: int) -> None:
        self.after, self.latest = after, latest


class _Viewer:
    def __init__(self, wanted: Filter) -> None:
        self.filter = wanted
        self.queue: asyncio.Queue[StoredEvent | None] = asyncio.Queue(VIEWER_QUEUE)
        self.lagging = False
        self.closed = False

    def offer(self, event: StoredEvent | None) -> None:
        if self.lagging:
            return
        if event is not None and not self.filter.match(event):
            return
        try:
            self.queue.put_nowait(event)
        except asyncio.QueueFull:
            # The queue is full, so the viewer's next get() returns at once and sees the flag.
            self.lagging = True


Backlog = Callable[[int, Filter], list[StoredEvent]]


class Fanout:
    def __init__(self) -> None:
        self._viewers: set[_Viewer] = set()
        self.lag_count = 0

    @property
    def viewers(self) -> int:
        return len(self._viewers)

    def publish(self, event: StoredEvent) -> None:
        for viewer in tuple(self._viewers):
            viewer.offer(event)

    def close(self) -> None:
        for viewer in tuple(self._viewers):
            viewer.closed = True
            if not viewer.queue.full():
                viewer.queue.put_nowait(None)

    async def follow(
        self, after: int, wanted: Filter, backlog: Backlog, latest: Callable[[], int]
    ) -> AsyncIterator[StoredEvent | Missed]:
        """Stored events after ``after`` (matching ``wanted``), then live ones, until closed."""
        async for batch in self.follow_batches(after, wanted, backlog, latest):
            if isinstance(batch, list):
                for event in batch:
                    yield event
            elif isinstance(batch, Missed):
                yield batch

    async def follow_batches(
        self,
        after: int,
        wanted: Filter,
        backlog: Backlog,
        latest: Callable[[], int],
        *,
        keepalive: float | None = None,
        batch: int = 256,
        coalesce: float = 0.0,
    ) -> AsyncIterator[list[StoredEvent] | Missed | None]:
        """:meth:`follow` in batches: everything a viewer has queued comes as one list (one write
        for the stream). ``None`` is yielded after ``keepalive`` seconds of silence; ``coalesce``
        seconds after an event, the ones that arrived meanwhile join its batch."""
        viewer = _Viewer(wanted)
        self._viewers.add(viewer)
        last = after
        try:
            # Registered before reading the store, so nothing falls between the two.
            while chunk := backlog(last, wanted):
                yield chunk
                last = chunk[-1].id
            if viewer.lagging:
                # It filled up during the replay, which already read everything it held.
                _drain(viewer.queue)
                viewer.lagging = False
            while not viewer.closed:
                if viewer.lagging:
                    self.lag_count += 1
                    yield Missed(last, latest())
                    _drain(viewer.queue)
                    viewer.lagging = False
                    while chunk := backlog(last, wanted):
                        yield chunk
                        last = chunk[-1].id
                    continue
                if viewer.queue.empty():
                    try:
                        # Cancelling Queue.get loses nothing: an item is taken only on success.
                        first = await asyncio.wait_for(viewer.queue.get(), keepalive)
                    except TimeoutError:
                        yield None
                        continue
                else:
                    first = viewer.queue.get_nowait()
                if coalesce and viewer.queue.empty():
                    # A moment for the events right behind this one, so they share its write.
                    await asyncio.sleep(coalesce)
                items = [first]
                while len(items) < batch and not viewer.queue.empty():
                    items.append(viewer.queue.get_nowait())
                fresh: list[StoredEvent] = []
                for item in items:
                    if item is None:
                        if fresh:
                            yield fresh
                        return
                    if item.id > last:
                        last = item.id
                        fresh.append(item)
                if fresh:
                    yield fresh
        finally:
            self._viewers.discard(viewer)


def _drain(queue: asyncio.Queue[StoredEvent | None]) -> None:
    while not queue.empty():
        queue.get_nowait()
