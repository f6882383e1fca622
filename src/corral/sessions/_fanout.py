"""Early fan-out: a session's envelopes reach its observers when accepted, not when committed.

Every envelope is still stored by the transcript's group commit (:mod:`corral.sessions._store`),
but an observer does not wait for that commit (a thread hop, possibly an fsync shared with the
prompt queue, then a hop back to the loop): :meth:`FanOut.accept` publishes an envelope at once
when its ``seq`` is inside the session's **seq reservation**, a number committed beforehand in
``event_seq_reservations``. So every ``seq`` an observer ever saw is either in the transcript or
at most the committed reservation, and a process that starts emitting for a session starts after
``max(last stored seq, reservation)`` (:meth:`SessionStore.seq_start
<corral.sessions._store.SessionStore.seq_start>`): after a crash, no ``seq`` an observer saw is
ever given to another event, so a reconnecting observer (``Last-Event-ID``) never skips one; the
events it saw that the crash kept from the transcript are gone, and the numbering jumps past them.

The reservation is extended ahead of use, ``RESERVE_BLOCK`` seqs at a time, by a one-statement
write submitted once the session comes within ``RESERVE_AHEAD`` of it (one write per ~1,000
events). An envelope beyond the committed reservation is *held*, and the envelopes after it too
(order is per session), until the reservation covering it or the transcript batch holding it is
committed, whichever comes first: the old publish-after-commit path. A clean close
(:meth:`FanOut.release`) drops the reservations, so a clean restart numbers on without a jump.
See docs/decisions/046-early-fan-out.md.
"""

from __future__ import annotations

import asyncio
import collections
import sqlite3
from collections.abc import Callable
from typing import Any

from ..events import Envelope
from ._writer import Pending

RESERVE_BLOCK = 1024
"""Seqs reserved by one write."""
RESERVE_AHEAD = 512
"""A new reservation is asked for once a session's seq comes this close to the committed one."""

Reserve = Callable[[str, int], "Pending[Any]"]
"""Submits ``reservation = max(reservation, n)`` for a session; resolves once committed."""


class _Lane:
    """One session: its committed reservation, the last seq accepted, the envelopes held
    (each with its JSON)."""

    __slots__ = ("asking", "held", "last", "reserved")

    def __init__(self, start: int) -> None:
        self.reserved = start
        self.last = start
        self.asking = False
        self.held: collections.deque[tuple[Envelope, bytes]] = collections.deque()


class FanOut:
    """Publishes each session's envelopes in ``seq`` order, as early as the reservation allows."""

    def __init__(self, publish: Callable[[Envelope, bytes], None], reserve: Reserve) -> None:
        self._publish = publish
        self._reserve = reserve
        self._lanes: dict[str, _Lane] = {}
        self._released = False

    def start(self, session_id: str, start: int) -> None:
        """The session's numbering starts after ``start`` in this process (nothing reserved)."""
        self._lanes[session_id] = _Lane(start)

    def accept(self, envelope: Envelope, data: bytes) -> None:
        """``envelope`` (its JSON: ``data``) was numbered and handed to the store: publish it
        now, or hold it."""
        lane = self._lanes.get(envelope.session_id)
        if lane is None:  # numbered elsewhere: publish after its commit only
            lane = self._lanes[envelope.session_id] = _Lane(envelope.seq - 1)
        lane.last = envelope.seq
        if not lane.held and envelope.seq <= lane.reserved:
            self._publish(envelope, data)
        else:
            lane.held.append((envelope, data))
        if not (lane.asking or self._released) and envelope.seq + RESERVE_AHEAD > lane.reserved:
            self._extend(envelope.session_id, lane, envelope.seq + RESERVE_BLOCK)

    def stored(self, batch: list[Envelope]) -> None:
        """A transcript batch was written (or failed): what it holds need not wait any more."""
        upto: dict[str, int] = {}
        for envelope in batch:
            upto[envelope.session_id] = envelope.seq
        for session_id, seq in upto.items():
            lane = self._lanes.get(session_id)
            if lane is not None:
                self._release_held(lane, seq)

    def release(self) -> list[str]:
        """Stop reserving (a clean close, once every envelope accepted is stored): nothing is
        held any more, and no reservation is asked for again. Returns the sessions numbered here,
        whose reservations can be dropped."""
        for lane in self._lanes.values():
            self._release_held(lane, lane.last)
            lane.reserved = lane.last
        self._released = True  # from now on an envelope is published after its commit
        return list(self._lanes)

    # ── internals ──
    def _release_held(self, lane: _Lane, upto: int) -> None:
        held = lane.held
        while held and held[0][0].seq <= upto:
            self._publish(*held.popleft())

    def _extend(self, session_id: str, lane: _Lane, target: int) -> None:
        try:
            loop = asyncio.get_running_loop()
            future = self._reserve(session_id, target)
        except (RuntimeError, sqlite3.Error):  # no loop, or the writer is closed: commit order
            return
        lane.asking = True
        asyncio.wrap_future(future, loop=loop).add_done_callback(
            lambda f: self._reserved(session_id, lane, target, f)
        )

    def _reserved(
        self, session_id: str, lane: _Lane, target: int, future: asyncio.Future[Any]
    ) -> None:
        lane.asking = False
        if self._released or self._lanes.get(session_id) is not lane:
            return  # released (or restarted) meanwhile: the commits publish what is held
        if future.cancelled() or future.exception() is not None:
            return  # held envelopes go out after their own commit; the next accept asks again
        lane.reserved = target
        self._release_held(lane, target)
