"""`corral record` records any driver's traffic from the real CLI (here: codex over its target)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.realcli("codex"), pytest.mark.timeout(300)]


def test_corral_record_writes_a_transcript_and_its_sidecar(tmp_path: Path, agent_bin) -> None:  # type: ignore[no-untyped-def]
    agent_bin("codex")
    proc = subprocess.run(
        [sys.executable, "-m", "corral", "record", "codex", "text", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    (path,) = tmp_path.glob("codex/*/text.jsonl")
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    assert {e["dir"] for e in entries} >= {"in", "out"}
    methods = [e["line"].get("method") for e in entries if e["dir"] == "in" and "line" in e]
    assert methods[:2] == ["initialize", "initialized"]
    assert "turn/start" in methods
    meta = json.loads(path.with_suffix(".meta.json").read_text())
    assert meta["scenario"] == "text"
    assert meta["outcome"] == "pass"
