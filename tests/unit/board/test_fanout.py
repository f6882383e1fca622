"""A slow viewer never holds ingestion up, is told it missed events, and catches up in order."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from corral.board import Board, Filter, Missed, StoredEvent, _fanout


def post(board: Board, i: int, kind: str = "command") -> None:
    board.ingest(json.dumps({"v": 1, "session": "s", "kind": kind, "summary": f"e{i}"}).encode())


async def test_a_lagging_viewer_is_told_and_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_fanout, "VIEWER_QUEUE", 8)
    board = Board(tmp_path / "b.db")
    try:
        slow = board.follow(0, Filter())
        fast = board.follow(0, Filter())
        # Both followers wait live (registration happens on the first step).
        pending = [asyncio.ensure_future(anext(slow)), asyncio.ensure_future(anext(fast))]
        await asyncio.sleep(0.01)
        post(board, 0)
        first_slow, first_fast = await asyncio.wait_for(asyncio.gather(*pending), 5)
        assert first_slow.id == first_fast.id == 1  # type: ignore[union-attr]

        fast_seen: list[int] = []

        async def drain_fast() -> None:
            async for item in fast:
                assert isinstance(item, StoredEvent)
                fast_seen.append(item.id)
                if item.id == 51:
                    return

        fast_task = asyncio.create_task(drain_fast())
        for i in range(1, 51):
            post(board, i)  # synchronous: never waits for the slow viewer
            await asyncio.sleep(0)
        await asyncio.wait_for(fast_task, 5)
        assert fast_seen == list(range(2, 52))

        items: list[StoredEvent | Missed] = []
        while not any(isinstance(i, StoredEvent) and i.id == 51 for i in items):
            items.append(await asyncio.wait_for(anext(slow), 5))
        missed = [i for i in items if isinstance(i, Missed)]
        assert len(missed) == 1
        assert missed[0].latest == 51
        ids = [i.id for i in items if isinstance(i, StoredEvent)]
        assert ids == list(range(2, 52))  # nothing lost, nothing twice, in order
        assert board.fanout.lag_count == 1
    finally:
        board.close()


async def test_a_filtered_follow_replays_only_matching(tmp_path: Path) -> None:
    board = Board(tmp_path / "b.db")
    try:
        for i in range(6):
            post(board, i, "git" if i % 2 else "edit")
        follower = board.follow(0, Filter(kind="git"))
        got = [await anext(follower) for _ in range(3)]
        assert [g.summary for g in got if isinstance(g, StoredEvent)] == ["e1", "e3", "e5"]
        board.fanout.close()
    finally:
        board.close()


async def test_concurrent_posts_share_a_transaction_and_keep_their_own_ids(tmp_path: Path) -> None:
    board = Board(tmp_path / "b.db")
    try:
        bodies = [
            json.dumps({"v": 1, "session": "s", "kind": "edit", "summary": f"e{i}"}).encode()
            for i in range(20)
        ]
        bodies[7] = b'{"v": 1, "session": "s", "kind": "nope", "summary": "x"}'
        results = await asyncio.gather(
            *(board.ingest_grouped(b) for b in bodies), return_exceptions=True
        )
        assert [type(r).__name__ for r in results].count("InvalidEvent") == 1
        stored = [r.stored[0] for r in results if not isinstance(r, BaseException)]
        assert [e.summary for e in stored] == [f"e{i}" for i in range(20) if i != 7]
        assert [e.id for e in stored] == list(range(1, 20))
        assert [e.id for e in board.store.after(0)] == list(range(1, 20))
    finally:
        board.close()
