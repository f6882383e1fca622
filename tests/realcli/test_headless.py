"""Each pinned CLI in its own headless mode (no corral driver) against the scripted model server.

Scenario ``write-file``: the model asks the CLI to write ``hello.txt`` = ``hi`` with whatever
write-file tool it advertises, then answers ``DONE`` once it sees the tool result. Each test
checks the file on disk and, in the server's request log, that the tool result came back.
The CLI is pointed at the server by ``corral.redirect`` — the same code the launcher uses.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from corral.redirect import redirect_for
from corral.testing import FakeModelServer

pytestmark = pytest.mark.realcli

PROMPT = "Create a file named hello.txt in the current directory containing exactly: hi"
MODEL = "fake-model"

# agent → (argv before the redirection's argv, argv after it, timeout in seconds).
# The prompt is appended last.
HEADLESS: dict[str, tuple[list[str], list[str], float]] = {
    "claude": (
        [],
        ["--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits", "-p"],
        90,
    ),
    "codex": (["exec", "--json", "--dangerously-bypass-approvals-and-sandbox"], [], 90),
    "opencode": (["run", "--format", "json"], [], 150),
    "gemini": ([], ["--output-format", "stream-json", "--yolo", "--skip-trust", "-p"], 120),
    "pi": (["--mode", "json"], ["-p"], 90),
    "qwen": ([], ["--output-format", "stream-json", "--yolo", "-p"], 120),
    "hermes": ([], ["-z"], 150),
    "kilo": (["run", "--format", "json"], [], 150),
}


@pytest.mark.parametrize("agent", [pytest.param(a, marks=pytest.mark.realcli(a)) for a in HEADLESS])
@pytest.mark.timeout(200)
def test_headless_write_file(
    agent: str,
    fake_model: FakeModelServer,
    isolated_home: Path,
    git_repo: Path,
    agent_bin: Callable[[str], Path],
    run_agent: Callable[..., Any],
    clean_env: dict[str, str],
) -> None:
    binary = agent_bin(agent)
    before, after, timeout = HEADLESS[agent]
    redirection = redirect_for(
        agent, base_url=fake_model.base_url, model=MODEL, api_key="test", home=isolated_home
    )
    redirection.apply()
    argv = [str(binary), *before, *redirection.argv, *after, PROMPT]
    run = run_agent(
        argv, env=redirection.environ(clean_env), cwd=git_repo, timeout=timeout, label=agent
    )

    assert run.returncode == 0, run.describe()
    hello = git_repo / "hello.txt"
    assert hello.is_file(), f"hello.txt was not written\n{run.describe()}"
    assert hello.read_text().strip() == "hi"
    assert fake_model.requests.with_tool_result(), (
        f"the model never received a tool result; requests: "
        f"{[(r.method, r.path, r.outcome) for r in fake_model.requests]}\n{run.describe()}"
    )
