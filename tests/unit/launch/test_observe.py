"""``--observe``: a recorded Claude Code stream fed in arbitrary chunks becomes events, usage and
a session record; garbage never raises."""

from __future__ import annotations

import json
from pathlib import Path

from corral.launch._observe import MAX_LINE, Observation

TRANSCRIPT = Path(__file__).parents[2] / "fixtures/transcripts/claude/2.1.197/text.jsonl"


def stdout_bytes() -> bytes:
    lines = []
    for raw in TRANSCRIPT.read_text().splitlines():
        entry = json.loads(raw)
        if entry.get("dir") == "out":
            lines.append(json.dumps(entry["line"]))
    return ("\n".join(lines) + "\n").encode()


def test_recorded_stream_becomes_a_session_record(tmp_path: Path) -> None:
    data = stdout_bytes()
    obs = Observation("claude", tmp_path)
    for i in range(0, len(data), 7):  # chunks that split lines anywhere
        obs.feed(data[i : i + 7])
    summary = obs.finish(exit_code=0)
    assert summary.events > 0
    assert summary.input_tokens > 0 and summary.output_tokens > 0
    assert summary.skipped_lines == 0
    lines = obs.path.read_text().splitlines()
    assert len(lines) == summary.events + 1
    last = json.loads(lines[-1])
    assert last["type"] == "summary" and last["exitCode"] == 0
    assert any(json.loads(line).get("type") == "usage" for line in lines[:-1])


def test_oversized_and_undecodable_lines_are_skipped(tmp_path: Path) -> None:
    obs = Observation("codex", tmp_path)
    obs.feed(b"not json\n[1,2]\n")
    obs.feed(b"x" * (MAX_LINE + 10))
    obs.feed(b"tail of the huge line\n")
    obs.feed(b'{"type":"thread.started","thread_id":"t1"}\n')
    summary = obs.finish(exit_code=1)
    assert summary.skipped_lines == 3
    assert summary.events >= 1


def test_anything_a_harness_prints_is_total(tmp_path: Path) -> None:
    """Seeded random bytes, JSON fragments and odd JSON values: never an exception."""
    import random

    rng = random.Random(17)
    pieces = [b"{", b"}", b"\n", b'"type"', b":", b"null", b"[]", b'{"type":"result"}', b"\xff\xfe"]
    for _ in range(200):
        obs = Observation("claude", tmp_path)
        for _ in range(rng.randrange(12)):
            if rng.random() < 0.5:
                obs.feed(bytes(rng.randrange(256) for _ in range(rng.randrange(64))))
            else:
                obs.feed(b"".join(rng.choice(pieces) for _ in range(rng.randrange(8))))
        obs.finish()
