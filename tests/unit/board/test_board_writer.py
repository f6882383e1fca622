"""The board on the session manager's writer thread (decision 040): taps, grouped POSTs and
plain POSTs all commit there, and viewers get every event once, in id order."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from corral.board import Board, Filter, StoredEvent
from corral.events import Sequencer, StatusChanged, TurnCompleted
from corral.sessions._writer import DbWriter


def body(i: int) -> bytes:
    return json.dumps({"v": 1, "session": "s", "kind": "command", "summary": f"e{i}"}).encode()


async def test_every_write_path_through_the_writer_reaches_viewers_in_id_order(
    tmp_path: Path,
) -> None:
    db = tmp_path / "b.db"
    writer = DbWriter(db)
    board = Board(db, submit=lambda op: writer.submit(op, durable=False))
    try:
        viewer = board.follow(0, Filter())
        first = asyncio.ensure_future(anext(viewer))
        await asyncio.sleep(0.01)  # registered, waiting live
        seq = Sequencer("s", "scripted")
        grouped = []
        for i in range(30):
            board.tap(seq.wrap(TurnCompleted()), agent="scripted")
            grouped.append(asyncio.ensure_future(board.ingest_grouped(body(i))))
            if i % 10 == 0:
                board.ingest(body(1000 + i))  # the blocking form, between the others
            await asyncio.sleep(0)
        results = await asyncio.wait_for(asyncio.gather(*grouped), 10)
        assert all(r.to_json()["stored"] == 1 for r in results)
        got: list[StoredEvent] = [await asyncio.wait_for(first, 10)]  # type: ignore[list-item]
        while len(got) < 30 + 30 + 3:
            item = await asyncio.wait_for(anext(viewer), 10)
            assert isinstance(item, StoredEvent)
            got.append(item)
        ids = [e.id for e in got]
        assert ids == list(range(1, len(got) + 1))  # every one, once, in order
        assert [e.id for e in board.store.after(0, limit=1000)] == ids  # and stored
        assert writer.batches < len(got)  # grouped: fewer transactions than events
        assert board.tap_failures == 0
        board.tap(seq.wrap(StatusChanged(status="x")), agent="scripted")  # not board material
    finally:
        board.close()
        writer.close()
