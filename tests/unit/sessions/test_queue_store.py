"""The queue's durable record on its own: states, bound, edit/cancel/retry, recovery."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral import _db
from corral.adapters.base import Attachment
from corral.errors import QueueError, QueueFullError
from corral.sessions import PromptQueue, PromptState, SessionSpec, SessionStore


@pytest.fixture
def store_and_queue(tmp_path: Path) -> tuple[SessionStore, PromptQueue, str]:
    conn = _db.connect(tmp_path / "q.db")
    store = SessionStore(conn)
    sid = store.create(SessionSpec(adapter_id="scripted")).id
    return store, PromptQueue(conn, limit=3), sid


def test_fifo_claims_and_bound(store_and_queue: tuple[SessionStore, PromptQueue, str]) -> None:
    _, q, sid = store_and_queue
    ids = [q.enqueue(sid, f"p{i}").id for i in range(3)]
    with pytest.raises(QueueFullError) as info:
        q.enqueue(sid, "too many")
    assert info.value.limit == 3
    first = q.claim_next(sid)
    assert first is not None
    assert first.id == ids[0]
    assert first.state == PromptState.SENDING
    assert first.attempts == 1
    # a sending prompt still counts against the bound
    with pytest.raises(QueueFullError):
        q.enqueue(sid, "still too many")
    q.mark_delivered(first.id)
    q.enqueue(sid, "p3")
    order = [p.text for p in q.prompts(sid, [PromptState.QUEUED])]
    assert order == ["p1", "p2", "p3"]


def test_edit_keeps_record_images_and_launch(
    store_and_queue: tuple[SessionStore, PromptQueue, str],
) -> None:
    _, q, sid = store_and_queue
    image = Attachment(data=b"\x89PNG", media_type="image/png", name="a.png")
    p = q.enqueue(sid, "draft", attachments=[image], launch={"model": "m2", "effort": "high"})
    edited = q.edit(p.id, "final", expected_version=1)
    assert (edited.id, edited.position, edited.version, edited.text) == (
        p.id,
        p.position,
        2,
        "final",
    )
    assert edited.attachments == (image,)
    assert edited.launch == {"model": "m2", "effort": "high"}
    assert len(q.prompts(sid)) == 1
    with pytest.raises(QueueError):
        q.edit(p.id, "stale", expected_version=1)
    claimed = q.claim_next(sid)
    assert claimed is not None
    assert claimed.text == "final"
    with pytest.raises(QueueError):
        q.edit(p.id, "too late")


def test_cancel_and_retry(store_and_queue: tuple[SessionStore, PromptQueue, str]) -> None:
    _, q, sid = store_and_queue
    a, b = q.enqueue(sid, "a"), q.enqueue(sid, "b")
    assert q.cancel(a.id).state == PromptState.CANCELED
    with pytest.raises(QueueError):
        q.retry(a.id)  # canceled is final
    claimed = q.claim_next(sid)
    assert claimed is not None
    assert claimed.id == b.id
    failed = q.mark_failed(b.id, "boom")
    assert failed.state == PromptState.FAILED
    assert failed.error == "boom"
    c = q.enqueue(sid, "c")
    retried = q.retry(b.id)
    assert retried.state == PromptState.QUEUED
    assert retried.position > c.position  # retry goes to the tail
    assert retried.error is None
    assert [p.text for p in q.prompts(sid, [PromptState.QUEUED])] == ["c", "b"]
    # canceled stays visible
    assert q.get(a.id).state == PromptState.CANCELED


def test_recover_marks_sending_indeterminate_and_never_requeues(
    tmp_path: Path,
) -> None:
    db = tmp_path / "r.db"
    conn = _db.connect(db)
    sid = SessionStore(conn).create(SessionSpec(adapter_id="scripted")).id
    q = PromptQueue(conn)
    sent = q.enqueue(sid, "in flight")
    waiting = q.enqueue(sid, "waiting")
    assert q.claim_next(sid) is not None
    conn.close()  # "crash"
    conn2 = _db.connect(db)
    q2 = PromptQueue(conn2)
    recovered = q2.recover()
    assert [p.id for p in recovered] == [sent.id]
    assert q2.get(sent.id).state == PromptState.INDETERMINATE
    nxt = q2.claim_next(sid)
    assert nxt is not None
    assert nxt.id == waiting.id  # the indeterminate one is skipped
    assert q2.claim_next(sid) is None
    assert q2.retry(sent.id).state == PromptState.QUEUED  # only explicitly


def test_migrations_recorded_once_and_pragmas(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    conn = _db.connect(db)
    names = [r["name"] for r in conn.execute("SELECT name FROM _migrations ORDER BY rowid")]
    assert names == [m.__name__ for m in _db.MIGRATIONS]
    assert _db.migrate(conn) == []
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == _db.BUSY_TIMEOUT_MS
    applied = conn.execute("SELECT applied_at FROM _migrations").fetchone()[0]
    assert _db.from_db_time(applied).utcoffset() is not None
    with pytest.raises(ValueError, match="naive"):
        _db.to_db_time(__import__("datetime").datetime(2026, 1, 1))
