"""Validation of POSTed board events: v1 accepted, everything else refused with a reason."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from pathlib import Path

import pytest

from corral.board import KINDS, Board, InvalidEvent
from corral.events import Envelope, SessionStarted, TextDelta, encode
from corral.events._model import AgentInfo


def v1(**fields: object) -> dict[str, object]:
    return {"v": 1, "session": "s1", "kind": "edit", "summary": "Edit a.py", **fields}


@pytest.fixture
def board(tmp_path: Path) -> Board:
    b = Board(tmp_path / "b.db")
    yield b  # type: ignore[misc]
    b.close()


def test_the_fourteen_kinds_of_seed_002() -> None:
    assert (
        set(
            [
                "session",
                "end",
                "idle",
                "edit",
                "read",
                "search",
                "command",
                "test",
                "check",
                "git",
                "plan",
                "subagent",
                "web",
                "other",
            ]
        )
        == KINDS
    )


def test_a_v1_event_is_stored_with_an_id(board: Board) -> None:
    result = board.ingest(json.dumps(v1(file="a.py", running=True, agent="a1", task="t")).encode())
    assert [e.id for e in result.stored] == [1]
    [event] = board.store.after(0)
    assert (event.kind, event.file, event.running, event.agent, event.task) == (
        "edit",
        "a.py",
        True,
        "a1",
        "t",
    )


@pytest.mark.parametrize(
    ("raw", "reason", "path"),
    [
        (v1(v=2), "schema version must be 1", "$.v"),
        (v1(v=True), "schema version must be 1", "$.v"),
        (v1(kind="dance"), "unknown kind 'dance'", "$.kind"),
        (v1(ok="yes"), "ok must be a boolean", "$.ok"),
        (v1(running=1), "running must be a boolean", "$.running"),
        (v1(summary=3), "summary must be a string", "$.summary"),
        (v1(summary="  "), "summary must not be empty", "$.summary"),
        (v1(colour="red"), "unknown field 'colour' in a v1 event", "$.colour"),
        (v1(detail="x" * 20000), "detail longer than 16000 characters", "$.detail"),
        ({"v": 1, "kind": "edit", "summary": "x"}, "missing required field 'session'", "$"),
        ({"kind": "edit"}, "neither a v1 event (no 'v') nor a corral envelope", "$"),
    ],
)
def test_invalid_events_are_refused_with_the_reason(
    board: Board, raw: dict[str, object], reason: str, path: str
) -> None:
    with pytest.raises(InvalidEvent) as info:
        board.ingest(json.dumps(raw).encode())
    assert (info.value.reason, info.value.path) == (reason, path)
    assert board.store.last_id() == 0


def test_a_batch_is_all_or_nothing(board: Board) -> None:
    with pytest.raises(InvalidEvent) as info:
        board.ingest(json.dumps([v1(), v1(kind="nope")]).encode())
    assert info.value.path == "$[1].kind"
    assert board.store.last_id() == 0
    assert board.ingest(json.dumps([v1(), v1(kind="git")]).encode()).to_json()["stored"] == 2


@pytest.mark.parametrize("body", [b"", b"{", b"[]", b"3", b"[1]", b"null"])
def test_garbage_bodies_are_refused(board: Board, body: bytes) -> None:
    with pytest.raises(InvalidEvent):
        board.ingest(body)


def test_corral_envelopes_are_projected_and_non_board_material_is_reported(board: Board) -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    started = Envelope(
        session_id="S",
        seq=1,
        ts=now,
        source="claude-code",
        event=SessionStarted(agent=AgentInfo(agent_id="claude-code", name="Claude Code")),
    )
    delta = Envelope(
        session_id="S", seq=2, ts=now, source="claude-code", event=TextDelta(text="hi")
    )
    result = board.ingest(b"[%s,%s]" % (encode(started), encode(delta)))
    assert result.to_json()["stored"] == 1
    assert result.skipped == ["$[1]: text.delta is not board material"]
    [event] = board.store.after(0)
    assert (event.kind, event.session, event.agent, event.source) == (
        "session",
        "S",
        "claude-code",
        "envelope",
    )


def test_a_broken_envelope_is_refused(board: Board) -> None:
    with pytest.raises(InvalidEvent, match="not a corral envelope"):
        board.ingest(json.dumps({"session_id": "S", "seq": "x", "event": 3}).encode())


def _random_value(rng: random.Random, depth: int = 0) -> object:
    choice = rng.randrange(8 if depth < 3 else 5)
    if choice == 0:
        return None
    if choice == 1:
        return rng.choice([True, False])
    if choice == 2:
        return rng.randrange(-5, 5)
    if choice == 3:
        return rng.choice(["", " ", "edit", "x" * 3000, "\u2028", "a\ud800"])
    if choice == 4:
        return 1.5
    if choice == 5:
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(3))]
    return {rng.choice(["v", "kind", "a"]): _random_value(rng, depth + 1)}


def test_ingestion_is_total(board: Board) -> None:
    rng = random.Random(15)
    keys = ["v", "session", "kind", "summary", "ok", "running", "file", "x"]
    for _ in range(500):
        raw = {k: _random_value(rng) for k in rng.sample(keys, rng.randrange(len(keys)))}
        if rng.random() < 0.5:
            raw.update(v=1, session="s", summary="y")
        before = board.store.last_id()
        try:
            result = board.ingest(json.dumps(raw).encode())
        except InvalidEvent:
            assert board.store.last_id() == before
        else:
            assert board.store.last_id() == before + len(result.stored)


def test_lone_surrogates_are_repaired(board: Board) -> None:
    board.ingest(b'{"v":1,"session":"s","kind":"other","summary":"a\\ud800b"}')
    [event] = board.store.after(0)
    assert event.summary == "a?b"
