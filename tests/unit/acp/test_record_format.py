"""The ACP recorder's file format (the layout of ``corral.testing._record_targets``)."""

from __future__ import annotations

import json

from corral.testing import Recording
from corral.testing._record_targets import _version
from corral.testing._transcript import encode


def test_encode_and_replay_roundtrip() -> None:
    lines = [
        ("in", b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}'),
        ("out", b'{"jsonrpc":"2.0","id":1,"result":{"agentInfo":{"version":"9.9"}}}'),
        ("out", b"Warning: not json"),
        ("in", b'{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{}}'),
        ("out", b'{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}'),
        ("exit", b"0"),
    ]
    entries = [json.loads(x) for x in encode(lines).splitlines()]  # type: ignore[arg-type]
    assert entries[2] == {"dir": "out", "text": "Warning: not json"}
    assert entries[-1] == {"dir": "exit", "code": 0}
    assert _version(lines, "fallback") == "9.9"  # type: ignore[arg-type]
    assert _version([], "fallback") == "fallback"
    recording = Recording(entries)  # what the recorder writes is what the replay reads
    assert len(recording.segments) == 1
    assert [m["method"] for m in recording.sent()] == ["initialize", "session/prompt"]
    assert recording.factory(["agent"]).exit_code == 0
