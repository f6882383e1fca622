"""The hub's frame feeds (decision 040): encoded once, batched, in order, and a slow observer
neither blocks the others nor loses an envelope."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from corral.events import Envelope, Sequencer, TextDelta, encode
from corral.sessions._hub import Hub

WAIT = 5.0


def frame(envelope: Envelope, data: bytes) -> bytes:
    assert data == encode(envelope)  # the envelope's JSON comes with it
    return b"%d;" % envelope.seq


class Transcript:
    """What the store holds: every envelope published so far (the backlog of a feed)."""

    def __init__(self, hub: Hub, session_id: str = "s") -> None:
        self.hub = hub
        self.seq = Sequencer(session_id, "t")
        self.stored: list[Envelope] = []
        self.reads = 0

    def publish(self, n: int) -> list[Envelope]:
        envs = [self.seq.wrap(TextDelta(text=str(i))) for i in range(n)]
        for env in envs:  # stored before published, as the manager does
            self.stored.append(env)
            self.hub.publish(env)
        return envs

    def backlog(self, after: int) -> list[Envelope]:
        self.reads += 1
        return [e for e in self.stored if e.seq > after]


def seqs(batches: list[list[bytes]]) -> list[int]:
    return [int(f.rstrip(b";")) for batch in batches for f in batch]


async def take(feed: AsyncIterator[list[bytes]], until_seq: int) -> list[list[bytes]]:
    """Batches from ``feed`` until one holds ``until_seq`` (keepalives left out)."""
    out: list[list[bytes]] = []
    while True:
        batch = await asyncio.wait_for(anext(feed), WAIT)
        if batch:
            out.append(batch)
            if seqs([batch])[-1] >= until_seq:
                return out


async def test_replay_then_live_in_order_and_waiting_frames_are_one_batch() -> None:
    hub = Hub()
    log = Transcript(hub)
    log.publish(3)  # before the observer: replayed from the backlog
    feed = hub.follow_frames("s", 1, log.backlog, frame)
    first = await asyncio.wait_for(anext(feed), WAIT)
    assert seqs([first]) == [2, 3]
    log.publish(50)  # all in one loop iteration: one batch when the observer next reads
    batches = await take(feed, 53)
    assert seqs(batches) == list(range(4, 54))
    assert len(batches) == 1
    await feed.aclose()
    assert hub.observers("s") == 0


async def test_each_envelope_is_encoded_once_for_every_observer() -> None:
    hub = Hub()
    log = Transcript(hub)
    calls: list[int] = []

    def counting(envelope: Envelope, data: bytes) -> bytes:
        calls.append(envelope.seq)
        return frame(envelope, data)

    feeds = [hub.follow_frames("s", 0, log.backlog, counting) for _ in range(3)]
    # started: each registers, finds an empty backlog and waits for live frames
    waiting = [asyncio.ensure_future(anext(feed)) for feed in feeds]
    await asyncio.sleep(0)
    assert hub.observers("s") == 3
    log.publish(10)
    got = await asyncio.wait_for(asyncio.gather(*waiting), WAIT)
    assert [seqs([b]) for b in got] == [list(range(1, 11))] * 3
    assert calls == list(range(1, 11))  # once per envelope, not once per observer
    for feed in feeds:
        await feed.aclose()


async def test_a_slow_observer_does_not_hold_up_others_and_catches_up_in_order() -> None:
    hub = Hub()
    log = Transcript(hub)
    fast = hub.follow_frames("s", 0, log.backlog, frame, limit=8)
    slow = hub.follow_frames("s", 0, log.backlog, frame, limit=8)
    fast_next = asyncio.ensure_future(anext(fast))
    slow_next = asyncio.ensure_future(anext(slow))
    await asyncio.sleep(0)
    got_fast: list[list[bytes]] = []
    for _ in range(20):  # 20 loop iterations of 5 envelopes; the slow one never reads
        log.publish(5)
        got_fast.append(await asyncio.wait_for(fast_next, WAIT))
        fast_next = asyncio.ensure_future(anext(fast))
    assert seqs(got_fast) == list(range(1, 101))
    # The slow observer's buffer was bounded: it went lagging and dropped its buffer...
    slow_feed = next(s for s in hub._subs["s"] if getattr(s, "lagging", False))
    assert len(slow_feed.frames) == 0
    # ...and still gets every envelope once, in order, from the transcript.
    reads = log.reads
    first = await asyncio.wait_for(slow_next, WAIT)
    rest = await take(slow, 100) if seqs([first])[-1] < 100 else []
    assert seqs([first, *rest]) == list(range(1, 101))
    assert log.reads > reads  # it caught up from the store
    log.publish(1)  # and follows live again
    assert seqs(await take(slow, 101)) == [101]
    fast_next.cancel()
    await fast.aclose()
    await slow.aclose()


async def test_keepalive_is_an_empty_batch_and_close_ends_after_the_waiting_frames() -> None:
    hub = Hub()
    log = Transcript(hub)
    feed = hub.follow_frames("s", 0, log.backlog, frame, keepalive=0.01)
    assert await asyncio.wait_for(anext(feed), WAIT) == []
    log.publish(2)
    hub.close()
    assert seqs([await asyncio.wait_for(anext(feed), WAIT)]) == [1, 2]
    rest = [batch async for batch in feed]
    assert rest == []


async def test_follow_false_ends_after_the_replay() -> None:
    hub = Hub()
    log = Transcript(hub)
    log.publish(600)
    batches = [batch async for batch in hub.follow_frames("s", 0, log.backlog, frame, follow=False)]
    assert seqs(batches) == list(range(1, 601))
    assert max(len(b) for b in batches) <= 256  # a long replay goes out in bounded writes
