"""`corral run AGENT PROMPT --json` on every driver, each pointed at the scripted model server.

The redirection's environment goes in the process environment and its argv additions through
``--agent-arg``, exactly as a user would point a CLI at their own endpoint. ``--binary`` is a
wrapper that logs each start before it execs the pinned CLI: one run starts the agent once, and
for an adapter with an early launch (decision 044) the lean path is shown to have spawned it, so
that one start is the early process, handed over to the driver on the real CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from corral.adapters._early import EARLY_LAUNCHES
from corral.redirect import redirect_for
from corral.testing import FakeModelServer

HELLO = "Hello from the scripted model."
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
    "opencode-run": "opencode",
    "pi": "pi",
}
MODEL = {"opencode-run": "corral/fake-model"}
"""Adapters that take the model in another form than the redirection's name (provider/model)."""


@pytest.fixture(scope="module")
def server() -> FakeModelServer:
    with FakeModelServer({"default": {"text": HELLO, "chunks": 3}}) as srv:
        yield srv  # type: ignore[misc]


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "adapter_id",
    [pytest.param(a, marks=pytest.mark.realcli(cli)) for a, cli in AGENTS.items()],
)
def test_corral_run_streams_one_turn(
    adapter_id: str,
    server: FakeModelServer,
    isolated_home: Path,
    git_repo: Path,
    agent_bin: Callable[[str], Path],
) -> None:
    cli = AGENTS[adapter_id]
    binary, starts = _start_logging(agent_bin(cli), git_repo.parent)
    red = redirect_for(
        cli, base_url=server.base_url, model="fake-model", api_key="test", home=isolated_home
    )
    red.apply()
    env = {**os.environ, **red.env, "PWD": str(git_repo)}
    argv = [
        sys.executable,
        "-m",
        "corral",
        "run",
        adapter_id,
        "Say hello.",
        "--json",
        "--binary",
        str(binary),
        "--model",
        MODEL.get(adapter_id, "fake-model"),
        "--cwd",
        str(git_repo),
    ]
    for arg in red.argv:
        argv.append(f"--agent-arg={arg}")
    if adapter_id in EARLY_LAUNCHES:
        assert _spawned_early(argv, env, git_repo), f"{adapter_id}: not an early launch"
    proc = subprocess.run(
        argv,
        env=env,
        cwd=git_repo,
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    events = [json.loads(line)["event"] for line in proc.stdout.splitlines() if line.strip()]
    types = [e["type"] for e in events]
    assert "session.started" in types
    assert "turn.completed" in types
    assert types.index("session.started") < types.index("turn.completed")
    assert types[-1] == "session.ended"
    text = "".join(e["text"] for e in events if e["type"] == "text.complete")
    text = text or "".join(e["text"] for e in events if e["type"] == "text.delta")
    assert HELLO in text, types
    assert len(starts.read_text().splitlines()) == 1  # no early process discarded and restarted


def _start_logging(real: Path, where: Path) -> tuple[Path, Path]:
    """A wrapper of ``real`` that appends a line to a log at each start, and that log."""
    starts = where / "starts.log"
    starts.touch()
    wrapper = where / f"{real.name}-logged"
    wrapper.write_text(f'#!/bin/sh\necho "start $$" >> "{starts}"\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    return wrapper, starts


def _spawned_early(argv: list[str], env: dict[str, str], cwd: Path) -> bool:
    """Whether ``corral run``'s lean path, given this command line in this environment, spawns
    the agent before the driver is imported (spawn recorded, not run)."""
    code = (
        "import sys\n"
        "import corral._process._early as e\n"
        "seen = []\n"
        "e.spawn_early = lambda argv, *a, **k: seen.append(argv[0])\n"
        "from corral.cli._plain_args import parse\n"
        "from corral.cli._run_fast import _TABLE\n"
        "from corral.cli._run_early import spawn_for_run\n"
        "params, (agent, prompt) = parse(sys.argv[1:], _TABLE, (2, 2))\n"
        "spawn_for_run(agent, prompt, params)\n"
        "print(len(seen))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *argv[4:]],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        stdin=subprocess.DEVNULL,
    )
    return out.stdout.split() == ["1"]
