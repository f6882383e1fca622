"""``corral job run`` (seed 002's run contract) on the pinned real CLIs against the scripted model.

Each job is configured only by its environment. Checked: the marker lines of the agent's final
text are parsed into the result, the job log on stdout ends with that text, the exit codes are
the documented ones (0 completed, 1 agent failure, 2 bad AGENT_MODE before any process starts,
5 an intent the agent cannot enforce, 124 timeout), and with BOARD_PORT every action reaches the
board tagged with the BOARD_* ids. ``AGENT_MODE`` is the intent (docs/intents.md): a write the
model tries under ``review`` never reaches the disk, and under ``act-pr`` a commit lands while a
rebase and a force-push (which the intent forbids) change neither the local history nor the
remote.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _board_helpers import BoardFollower, board_service

from conftest import Run, base_env, run_cli
from corral.redirect import redirect_for
from corral.testing import FakeModelServer

AGENTS = {"claude-code": "claude", "codex": "codex", "pi": "pi"}
PARAMS = [pytest.param(a, marks=pytest.mark.realcli(cli)) for a, cli in AGENTS.items()]
ENFORCING = [p for p in PARAMS if p.values[0] != "pi"]
"""pi has no permission system: it enforces no job intent (work / act-pr / review are refused)."""

WORK_TEXT = "I looked at the task.\nNOT READY: the spec names no input format\nDetails follow."
REVIEW_TEXT = "Reviewed the diff.\nPR REVIEW: REQUEST CHANGES\n- the loop never ends"
ACT_PR_TEXT = "Handled the review.\nADDRESSED: the loop now ends after three tries\nPushed."
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "corral",
    "GIT_AUTHOR_EMAIL": "corral@localhost",
    "GIT_COMMITTER_NAME": "corral",
    "GIT_COMMITTER_EMAIL": "corral@localhost",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def job(
    adapter: str,
    scenario: dict[str, Any] | str,
    *,
    home: Path,
    repo: Path,
    binary: Path,
    agent_env: dict[str, str],
    timeout: float = 120,
    job_args: tuple[str, ...] = (),
) -> tuple[Run, FakeModelServer]:
    cli = AGENTS[adapter]
    with FakeModelServer(scenario) as model:
        red = redirect_for(
            cli, base_url=model.base_url, model="fake-model", api_key="test", home=home
        )
        red.apply()
        env = {**base_env(), **red.env, "AGENT_CWD": str(repo), **agent_env}
        if "CORRAL_HOME" in os.environ:
            env["CORRAL_HOME"] = os.environ["CORRAL_HOME"]
        argv = [
            sys.executable,
            "-m",
            "corral",
            "job",
            "run",
            adapter,
            "--json",
            "--binary",
            str(binary),
        ]
        argv += [f"--agent-arg={a}" for a in red.argv] + list(job_args)
        run = run_cli(argv, env=env, cwd=repo, timeout=timeout, label=f"job-{adapter}")
        return run, model


@pytest.fixture
def binary_for(agent_bin: Callable[[str], Path]) -> Callable[[str], Path]:
    return lambda adapter: agent_bin(AGENTS[adapter])


@pytest.mark.timeout(300)
@pytest.mark.parametrize("adapter", ENFORCING)
def test_review_job_writes_nothing(
    adapter: str, binary_for: Callable[[str], Path], isolated_home: Path, git_repo: Path
) -> None:
    """The model tries to write under AGENT_MODE=review; the disk is checked, not its words."""
    tries: list[dict[str, Any]] = [
        {"capability": "shell", "command": "touch touched.txt"},
        {"capability": "shell", "command": "sh -c 'echo hi > shc.txt'"},
    ]
    if adapter == "claude-code":  # its edit tools are removed under review: call one by name
        tries.insert(0, {"name": "Write", "arguments": {"file_path": f"{git_repo}/new.txt"}})
        tries[0]["arguments"]["content"] = "x"
    steps = [
        {"match": {"turn": i + 1}, "reply": {"tool_calls": [call]}} for i, call in enumerate(tries)
    ]
    steps.append({"match": {"turn": len(tries) + 1}, "reply": {"text": REVIEW_TEXT}})
    before = sorted(p.name for p in git_repo.iterdir())
    run, model = job(
        adapter,
        {"name": "review-tries", "steps": steps, "default": {"text": REVIEW_TEXT}},
        agent_env={"AGENT_PROMPT": "Review.", "AGENT_MODE": "review", "AGENT_MODEL": "fake-model"},
        home=isolated_home,
        repo=git_repo,
        binary=binary_for(adapter),
    )
    assert run.returncode == 0, run.describe()
    result = json.loads(run.stdout)
    assert result["intent_enforced"] is True
    assert result["markers"]["pr_review"] == "REQUEST CHANGES"
    assert sorted(p.name for p in git_repo.iterdir()) == before, run.describe()
    assert len(model.requests) > len(tries) - 1  # the tries were really made


def _git(repo: Path, *args: str) -> str:
    env = {**base_env(), **GIT_IDENTITY, "HOME": str(repo.parent)}
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True, timeout=30
    )
    return done.stdout.strip()


def _diverged_remote(repo: Path) -> Path:
    """A bare ``origin`` holding a commit the local ``main`` lacks, while ``main`` holds one the
    remote lacks: only a rebase or a force-push could make them agree."""
    remote = repo.parent / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    _git(repo, "remote", "add", "origin", str(remote))
    _git(repo, "push", "-q", "origin", "main")
    other = repo.parent / "other"
    _git(repo.parent, "clone", "-q", str(remote), str(other))
    (other / "theirs.txt").write_text("theirs\n")
    _git(other, "add", "theirs.txt")
    _git(other, "commit", "-q", "-m", "theirs")
    _git(other, "push", "-q", "origin", "main")
    (repo / "ours.txt").write_text("ours\n")
    _git(repo, "add", "ours.txt")
    _git(repo, "commit", "-q", "-m", "ours")
    _git(repo, "fetch", "-q", "origin")
    return remote


@pytest.mark.timeout(300)
@pytest.mark.parametrize("adapter", ENFORCING)
def test_act_pr_job_commits_but_never_rewrites(
    adapter: str, binary_for: Callable[[str], Path], isolated_home: Path, git_repo: Path
) -> None:
    """Under AGENT_MODE=act-pr the model commits (granted), then tries a rebase and a
    force-push (forbidden): the commit is there, the local history and the remote are not
    rewritten. Read in git, not from the agent's words."""
    remote = _diverged_remote(git_repo)
    local_before = _git(git_repo, "rev-parse", "HEAD")
    remote_before = _git(remote, "rev-parse", "main")
    tries = [
        "git commit --allow-empty -m addressed",
        "git rebase origin/main",
        "git push --force origin main",
    ]
    steps: list[dict[str, Any]] = [
        {"match": {"turn": i + 1}, "reply": {"tool_calls": [{"capability": "shell", "command": c}]}}
        for i, c in enumerate(tries)
    ]
    steps.append({"match": {"turn": len(tries) + 1}, "reply": {"text": ACT_PR_TEXT}})
    run, model = job(
        adapter,
        {"name": "act-pr-tries", "steps": steps, "default": {"text": ACT_PR_TEXT}},
        agent_env={
            "AGENT_PROMPT": "Address the review.",
            "AGENT_MODE": "act-pr",
            "AGENT_MODEL": "fake-model",
            **GIT_IDENTITY,
        },
        home=isolated_home,
        repo=git_repo,
        binary=binary_for(adapter),
    )
    assert run.returncode == 0, run.describe()
    result = json.loads(run.stdout)
    assert result["intent_enforced"] is True
    assert result["markers"]["addressed"] == "the loop now ends after three tries"
    assert result["markers"]["report"].startswith("ADDRESSED:")
    assert len(model.requests) > len(tries)  # every try was made
    # granted: the commit landed on top of the local history
    assert _git(git_repo, "log", "-1", "--format=%s") == "addressed", run.describe()
    assert _git(git_repo, "rev-parse", "HEAD~1") == local_before, run.describe()  # no rebase
    assert _git(remote, "rev-parse", "main") == remote_before, run.describe()  # no force-push


@pytest.mark.timeout(300)
@pytest.mark.parametrize("adapter", PARAMS)
def test_markers_and_exit_codes(
    adapter: str, binary_for: Callable[[str], Path], isolated_home: Path, git_repo: Path
) -> None:
    binary = binary_for(adapter)
    common = {"home": isolated_home, "repo": git_repo, "binary": binary}
    model_env = {"AGENT_MODEL": "fake-model"}

    if adapter == "pi":
        run, model = job(
            adapter,
            {"default": {"text": WORK_TEXT}},
            agent_env={"AGENT_PROMPT": "Do the task.", "AGENT_MODE": "work", **model_env},
            **common,
        )
        assert run.returncode == 5, run.describe()
        result = json.loads(run.stdout)
        assert result["status"] == "refused"
        assert "work" in result["error"], result  # the refusal names the intent
        assert len(model.requests) == 0  # refused before any process started
        return

    run, _ = job(
        adapter,
        {"default": {"text": WORK_TEXT, "chunks": 3}},
        agent_env={"AGENT_PROMPT": "Do the task.", "AGENT_MODE": "work", **model_env},
        **common,
    )
    assert run.returncode == 0, run.describe()
    result = json.loads(run.stdout)
    assert result["status"] == "completed"
    assert result["markers"]["not_ready"] == "the spec names no input format"
    assert result["final_text"].strip().endswith("Details follow.")
    assert result["intent_enforced"] is True

    run, _ = job(
        adapter,
        {"default": {"text": REVIEW_TEXT, "chunks": 2}},
        agent_env={"AGENT_PROMPT": "Review the PR.", "AGENT_MODE": "review", **model_env},
        **common,
    )
    assert run.returncode == 0, run.describe()
    markers = json.loads(run.stdout)["markers"]
    assert markers["pr_review"] == "REQUEST CHANGES"
    assert markers["report"].startswith("PR REVIEW: REQUEST CHANGES")

    run, model = job(
        adapter,
        {"default": {"text": "never asked"}},
        agent_env={"AGENT_PROMPT": "x", "AGENT_MODE": "yolo"},
        **common,
    )
    assert run.returncode == 2, run.describe()
    assert "AGENT_MODE must be one of work, act-pr, review" in run.stderr
    assert len(model.requests) == 0  # refused before any process started

    run, _ = job(
        adapter,
        {"default": {"error": {"kind": "bad_request", "message": "scripted refusal"}}},
        agent_env={"AGENT_PROMPT": "x", "AGENT_MODE": "work", **model_env},
        **common,
    )
    assert run.returncode == 1, run.describe()
    assert json.loads(run.stdout)["status"] == "failed"

    run, _ = job(
        adapter,
        {"default": {"text": "late", "hold": {"seconds": 60}}},
        agent_env={"AGENT_PROMPT": "x", "AGENT_MODE": "work", **model_env},
        job_args=("--timeout", "8"),
        **common,
    )
    assert run.returncode == 124, run.describe()
    assert json.loads(run.stdout)["status"] == "timeout"


@pytest.fixture
def board(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, BoardFollower]]:
    # The board and the job share a corral home: the job authenticates with its token file.
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path / "corral-home"))
    with board_service(tmp_path / "board.db") as url:
        follower = BoardFollower(url)
        try:
            yield url, follower
        finally:
            follower.stop()


@pytest.mark.realcli("claude")
def test_job_events_reach_the_board_with_the_board_ids(
    board: tuple[str, BoardFollower],
    binary_for: Callable[[str], Path],
    isolated_home: Path,
    git_repo: Path,
) -> None:
    url, follower = board
    port = url.rsplit(":", 1)[1]
    run, _ = job(
        "claude-code",
        "write-file",
        home=isolated_home,
        repo=git_repo,
        binary=binary_for("claude-code"),
        agent_env={
            "AGENT_PROMPT": "Create hello.txt containing hi",
            "AGENT_MODE": "work",
            "BOARD_AGENT_ID": "agent-3",
            "BOARD_TASK": "07-hello",
            "BOARD_PORT": port,
        },
    )
    assert run.returncode in (0, 1), run.describe()
    events = follower.wait(lambda es: any(e["kind"] == "idle" for e in es), 30)
    assert {(e["agent"], e["task"]) for e in events} == {("agent-3", "07-hello")}
    assert events[0]["kind"] == "session"
    result = json.loads(run.stdout)
    assert result["board_events"] == len(events)
    assert result["board_dropped"] == 0
