"""A model stream that splits an emoji's UTF-16 surrogate pair across two deltas (the fake model's
``split-emoji`` scenario: ``"A\\ud83d"`` then ``"\\ude00B"``), on every conformance target through
``corral run AGENT --json``: corral neither crashes nor prints a lone surrogate, and the final
assistant text holds the emoji exactly.

What the CLI itself does with the halves is its own business (some join them before printing, some
print them as they came); corral's part is to join what the CLI emits. See docs/events.md.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from corral.redirect import redirect_for
from corral.testing import FakeModelServer

EXPECTED = "A\U0001f600B"
AGENTS = {
    # adapter id: pinned CLI
    "claude-code": "claude",
    "qwen": "qwen",
    "codex": "codex",
    "codex-exec": "codex",
    "gemini": "gemini",
    "gemini-exec": "gemini",
    "qwen-acp": "qwen",
    "opencode-acp": "opencode",
    "hermes": "hermes",
    "opencode": "opencode",
    "pi": "pi",
}


@pytest.fixture(scope="module")
def server() -> FakeModelServer:
    with FakeModelServer("split-emoji") as srv:
        yield srv  # type: ignore[misc]


def final_text(events: list[dict]) -> str:
    """The assistant's answer as corral reports it: complete texts, else the streamed deltas."""
    text = "".join(e["text"] for e in events if e["type"] == "text.complete")
    return text or "".join(e["text"] for e in events if e["type"] == "text.delta")


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "adapter_id",
    [pytest.param(a, marks=pytest.mark.realcli(cli)) for a, cli in AGENTS.items()],
)
def test_split_surrogate_pair_reassembles(
    adapter_id: str,
    server: FakeModelServer,
    isolated_home: Path,
    git_repo: Path,
    agent_bin: Callable[[str], Path],
) -> None:
    cli = AGENTS[adapter_id]
    binary = agent_bin(cli)
    red = redirect_for(
        cli, base_url=server.base_url, model="fake-model", api_key="test", home=isolated_home
    )
    red.apply()
    env = {**os.environ, **red.env, "PWD": str(git_repo)}
    argv = [sys.executable, "-m", "corral", "run", adapter_id, "Say hello.", "--json"]
    argv += ["--binary", str(binary), "--model", "fake-model", "--cwd", str(git_repo)]
    argv += [f"--agent-arg={arg}" for arg in red.argv]
    proc = subprocess.run(
        argv,
        env=env,
        cwd=git_repo,
        capture_output=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    stdout = proc.stdout.decode("utf-8")  # strict: a lone surrogate cannot be valid UTF-8 here
    events = [json.loads(line)["event"] for line in stdout.splitlines() if line.strip()]
    types = [e["type"] for e in events]
    assert types[-1] == "session.ended", types
    assert not [e for e in events if e["type"] == "error"], events
    deltas = "".join(e["text"] for e in events if e["type"] == "text.delta")
    assert "\ufffd" not in deltas, f"the halves were not joined: {deltas!r}"
    assert EXPECTED in final_text(events), (final_text(events), deltas)
