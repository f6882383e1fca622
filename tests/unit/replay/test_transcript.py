"""The one transcript format: what every recorder writes is what Recording reads."""

from __future__ import annotations

import json
from pathlib import Path

from corral.testing import Recording
from corral.testing._transcript import Tape, read, write


def test_tape_write_read_and_replay_roundtrip(tmp_path: Path) -> None:
    tape = Tape()
    tape.tap("in", b'{"type":"prompt","message":"hi","id":"corral-1"}')
    tape.tap("out", b'{"type":"response","id":"corral-1","success":true}')
    tape.tap("out", b"Warning: not json")
    tape.tap("exit", b"0")
    path = write(
        tmp_path,
        "pi",
        "1.2.3",
        "text",
        tape.entries(),
        {"cwd": "/tmp/rec-x1/repo"},
        scrub={"/tmp/rec-x1": "/tmp/corral-record"},
    )
    assert path == tmp_path / "pi" / "1.2.3" / "text.jsonl"
    assert json.loads(path.with_suffix(".meta.json").read_text()) == {
        "cwd": "/tmp/corral-record/repo"
    }
    entries = read(path)
    assert entries[2] == {"dir": "out", "text": "Warning: not json"}
    assert entries[-1] == {"dir": "exit", "code": 0}
    recording = Recording.load(path)
    assert recording.sent() == [{"type": "prompt", "message": "hi", "id": "corral-1"}]
    assert recording.factory(["pi"]).exit_code == 0
