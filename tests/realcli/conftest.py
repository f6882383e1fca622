"""Fixtures for the real-CLI tests: the scripted model server, an isolated home, a fresh git repo,
the pinned binary, and a runner that kills the whole process group when a run overstays.

A missing pinned CLI skips its test with a one-line reason, except under ``CI=true``, where it
fails: CI must run these tests, never skip them (install them with ``make agents``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from corral.testing import FakeModelServer, require_agent

# Variables a CLI process may inherit; everything else (API keys, real HOME, proxies) stays out.
_PASSTHROUGH = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "SYSTEMROOT")

_wall_times: dict[str, float] = {}


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _wall_times:
        terminalreporter.section("real-CLI headless wall time")
        for name, seconds in sorted(_wall_times.items(), key=lambda kv: kv[1]):
            terminalreporter.write_line(f"{name:10s} {seconds:6.2f} s")


@dataclass(frozen=True)
class Run:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def describe(self) -> str:
        return (
            f"$ {' '.join(self.argv)}\nexit {self.returncode} after {self.seconds:.1f}s\n"
            f"--- stdout (tail) ---\n{self.stdout[-3000:]}\n--- stderr (tail) ---\n{self.stderr[-3000:]}"
        )


def run_cli(
    argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, timeout: float, label: str = ""
) -> Run:
    """Run one CLI to completion in its own process group; on timeout kill the group and fail."""
    started = time.monotonic()
    proc = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        stdout, stderr = proc.communicate()
        run = Run(list(argv), -1, stdout, stderr, time.monotonic() - started)
        pytest.fail(f"{label or argv[0]} did not finish within {timeout:.0f}s\n{run.describe()}")
    finally:
        if proc.poll() is None:
            _kill_group(proc)
    seconds = time.monotonic() - started
    if label:
        _wall_times[label] = seconds
    return Run(list(argv), proc.returncode, stdout, stderr, seconds)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(grace)
            return
        except subprocess.TimeoutExpired:
            continue


def base_env() -> dict[str, str]:
    env = {k: os.environ[k] for k in _PASSTHROUGH if k in os.environ}
    env["NO_COLOR"] = "1"
    return env


@pytest.fixture
def run_agent() -> Callable[..., Run]:
    """``run_agent(argv, env=…, cwd=…, timeout=…, label=…) -> Run`` (see ``run_cli``)."""
    return run_cli


@pytest.fixture
def clean_env() -> dict[str, str]:
    """A minimal environment (PATH, locale, TMPDIR): no API keys, no real HOME."""
    return base_env()


@pytest.fixture
def fake_model() -> Iterator[FakeModelServer]:
    """The scripted model server playing ``write-file``: write hello.txt = hi, then say DONE."""
    with FakeModelServer("write-file") as server:
        yield server


@pytest.fixture
def isolated_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """A fresh git repository with one commit, to use as the agent's working directory."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("# scratch repo for a real-CLI test\n")
    git_env = {
        **base_env(),
        "HOME": str(tmp_path),
        "GIT_AUTHOR_NAME": "corral",
        "GIT_AUTHOR_EMAIL": "corral@localhost",
        "GIT_COMMITTER_NAME": "corral",
        "GIT_COMMITTER_EMAIL": "corral@localhost",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    for argv in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "add", "README.md"],
        ["git", "commit", "-q", "-m", "initial"],
    ):
        subprocess.run(argv, cwd=repo, env=git_env, check=True, capture_output=True, timeout=30)
    return repo


@pytest.fixture
def agent_bin() -> Callable[[str], Path]:
    """``agent_bin(name)``: the pinned CLI's binary; skip (fail under ``CI=true``) when missing."""

    return require_agent
