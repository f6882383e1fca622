"""The run contract as data: env parsing (refused by name), marker lines, exported adapters."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from corral.board._job import Markers, job_env, parse_markers
from corral.cli.job import export_adapter_files
from corral.errors import AdapterNotFoundError, ConfigError


def test_env_contract(tmp_path: Path) -> None:
    env = job_env(
        {
            "AGENT_PROMPT": "do it",
            "AGENT_MODE": "act-pr",
            "AGENT_COMMANDS": "python3 -m unittest, npm test,,",
            "AGENT_MODEL": "sonnet",
            "AGENT_CWD": str(tmp_path),
            "BOARD_AGENT_ID": "a1",
            "BOARD_TASK": "12-x",
            "BOARD_PORT": "26071",
        },
        default_cwd=Path("/"),
    )
    assert env.mode == "act-pr"
    assert env.commands == ("python3 -m unittest", "npm test")
    assert (env.model, env.cwd, env.board_agent, env.board_task, env.board_port) == (
        "sonnet",
        tmp_path.resolve(),
        "a1",
        "12-x",
        26071,
    )


def test_an_empty_model_is_no_model(tmp_path: Path) -> None:
    env = job_env(
        {"AGENT_PROMPT": "p", "AGENT_MODE": "work", "AGENT_MODEL": ""}, default_cwd=tmp_path
    )
    assert env.model is None
    assert env.cwd == tmp_path.resolve()


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"AGENT_MODE": "work"}, "AGENT_PROMPT is required"),
        ({"AGENT_PROMPT": " ", "AGENT_MODE": "work"}, "AGENT_PROMPT is required"),
        ({"AGENT_PROMPT": "p"}, "AGENT_MODE is required"),
        ({"AGENT_PROMPT": "p", "AGENT_MODE": "full"}, "AGENT_MODE must be one of work, act-pr, review"),
        ({"AGENT_PROMPT": "p", "AGENT_MODE": "work", "AGENT_CWD": "/nope/x"}, "AGENT_CWD is not a directory"),
        ({"AGENT_PROMPT": "p", "AGENT_MODE": "work", "BOARD_PORT": "http"}, "BOARD_PORT must be"),
        ({"AGENT_PROMPT": "p", "AGENT_MODE": "work", "BOARD_PORT": "70000"}, "BOARD_PORT must be"),
    ],
)  # fmt: skip
def test_bad_env_is_refused_by_name(tmp_path: Path, env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        job_env(env, default_cwd=tmp_path)


def test_markers() -> None:
    text = (
        "Some work.\n"
        "RELEVANCE REVIEW: Partly done\n"
        "evidence\n"
        "PR REVIEW: APPROVE — looks right\n"
        "  ADDRESSED: renamed the flag\n"
        "- point one\n"
    )
    markers = parse_markers(text)
    assert markers.relevance_review == "Partly done"
    assert markers.pr_review == "APPROVE"
    assert markers.pr_review_line == "APPROVE — looks right"
    assert markers.addressed == "renamed the flag"
    assert markers.report == "ADDRESSED: renamed the flag\n- point one"
    assert markers.not_ready is None


def test_the_last_marker_wins_and_prose_mentions_do_not_count() -> None:
    text = "I will say NOT READY: later\nPR REVIEW: APPROVE\nPR REVIEW: REQUEST CHANGES\n"
    markers = parse_markers(text)
    assert markers.not_ready is None
    assert markers.pr_review == "REQUEST CHANGES"
    assert parse_markers("PR REVIEW: maybe").pr_review is None
    assert parse_markers("no markers at all") == Markers()


def test_export_adapter_writes_executables(tmp_path: Path) -> None:
    target = tmp_path / "adapters" / "claude"
    written = export_adapter_files("claude-code", target)
    assert [p.name for p in written] == ["run", "wire"]
    for path in written:
        assert os.access(path, os.X_OK)
        assert path.read_text().startswith("#!/bin/sh\n")
        assert " -m corral " in path.read_text()
    # The exported wire takes the seed's arguments (PROJECT [--dry-run]) and reaches corral.
    project = tmp_path / "project"
    project.mkdir()
    done = subprocess.run(
        [str(target / "wire"), str(project), "--dry-run"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "CORRAL_HOME": str(tmp_path / "home"), "BOARD_PORT": "26071"},
    )
    assert done.returncode == 0, done.stderr
    assert "http://127.0.0.1:26071" in done.stdout
    assert not (project / ".claude").exists()  # a dry run writes nothing


def test_export_adapter_refuses_an_unknown_agent(tmp_path: Path) -> None:
    with pytest.raises(AdapterNotFoundError):
        export_adapter_files("no-such-agent", tmp_path / "x")
    assert not (tmp_path / "x").exists()
