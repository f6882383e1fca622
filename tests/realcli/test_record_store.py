"""`corral record AGENT store` on the real CLI: two headless turns, then the store reader finds
the session it left (id, cwd, first prompt), as its newest in that directory, and its transcript
tells both turns, tool call included."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from corral.adapters._stores import scan, store_for
from corral.events import StatusChanged, TextComplete, ToolCallCompleted, ToolCallStarted
from corral.testing import require_agent

AGENTS = {
    "claude-code": "claude",
    "codex": "codex",
    "gemini": "gemini",
    "qwen": "qwen",
    "pi": "pi",
    "opencode": "opencode",
    "hermes": "hermes",
}


@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    "agent", [pytest.param(a, marks=pytest.mark.realcli(cli)) for a, cli in AGENTS.items()]
)
def test_recorded_store_is_read_back(agent: str, tmp_path: Path) -> None:
    require_agent(AGENTS[agent])
    proc = subprocess.run(
        [sys.executable, "-m", "corral", "record", agent, "store", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=580,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (meta_file,) = tmp_path.glob(f"{AGENTS[agent]}/*/store.meta.json")
    meta = json.loads(meta_file.read_text())
    assert meta["exit_codes"] == [0, 0] and meta["files"]
    home = meta_file.parent / "store"
    for dump in home.rglob("*.db.sql"):  # a database is kept as SQL text
        with sqlite3.connect(dump.with_suffix("")) as conn:
            conn.executescript(dump.read_text())
    env = {k: v.replace(meta["home"], str(home)) for k, v in meta["env"].items()}
    module = store_for(agent)
    assert module is not None
    (entry,) = scan(module, env)
    assert entry.cwd == meta["cwd"]
    assert entry.title is not None and "hello.txt" in entry.title
    assert module.latest_sid_for_cwd(meta["cwd"], env) == entry.sid
    parser = module.Parser()
    events = [e for r in module.records_of(Path(entry.path)) for e in parser.feed(r)]
    assert len([e for e in events if isinstance(e, StatusChanged)]) == 2
    (call,) = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [e.call_id for e in events if isinstance(e, ToolCallCompleted)] == [call.call_id]
    assert any(isinstance(e, TextComplete) and "Second answer" in e.text for e in events)
