"""The stale-result rule: a consumer holding seq N drops anything ≤ N."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from corral.events import Envelope, Sequencer, StatusChanged
from corral.sessions import SeqGate, SessionManager

from .conftest import WAIT, is_type, new_session, wait_for


def _env(seq: int, status: str) -> Envelope:
    return Envelope(
        session_id="s",
        seq=seq,
        ts=datetime(2026, 1, 1, tzinfo=UTC),
        source="t",
        event=StatusChanged(status=status),
    )


def test_gate_drops_stale_and_duplicate_results() -> None:
    gate = SeqGate(last_seq=2)
    arrivals = [
        _env(1, "old"),
        _env(3, "busy"),
        _env(3, "busy-dup"),
        _env(5, "idle"),
        _env(4, "late"),
    ]
    state = None
    for env in arrivals:
        if gate.accept(env):
            state = env.event.status  # type: ignore[union-attr]
    assert state == "idle"  # the late seq 4 did not overwrite seq 5
    assert gate.last_seq == 5


def test_sequencer_resumes_after_stored_seq() -> None:
    seq = Sequencer("s", "x", start=41)
    assert seq.wrap(StatusChanged(status="a")).seq == 42


async def test_observers_resume_from_seq_without_gaps_or_repeats(
    manager: SessionManager,
) -> None:
    sid = await new_session(manager)
    manager.send(sid, "one")
    first = await wait_for(manager, sid, is_type("turn.completed"))
    cut = first[0].seq
    # two observers: one from the start, one resuming after `cut`
    manager.send(sid, "two")
    await wait_for(manager, sid, is_type("turn.completed"), after=cut)
    full = [e.seq for e in manager.events(sid)]

    async def collect(after: int) -> list[int]:
        return [e.seq async for e in manager.subscribe(sid, after=after, follow=False)]

    a, b = await asyncio.wait_for(asyncio.gather(collect(0), collect(cut)), WAIT)
    assert a == full
    assert b == [s for s in full if s > cut]
    # the manager's sequencer continues the stored numbering
    assert manager.get_session(sid).last_seq == full[-1]
