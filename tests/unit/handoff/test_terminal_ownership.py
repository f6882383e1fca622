"""Who drives a directory: a vendor CLI's process found in /proc, ours never counted."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from corral._process._scan import names_other_session, program_name
from corral.adapters.claude import ClaudeAdapter
from corral.adapters.codex import CodexAdapter, CodexExecAdapter
from corral.adapters.gemini import GeminiAdapter
from corral.adapters.hermes import HermesAdapter
from corral.adapters.opencode import OpenCodeAdapter
from corral.adapters.pi import PiAdapter
from corral.adapters.qwen import QwenAdapter
from corral.adapters.qwen_acp import QwenAcpAdapter
from corral.errors import ConfigError

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")

SID = "0b6c1f0e-8a39-4c55-9a43-2f1f7b3f7a11"


def _fake_cli(bindir: Path, name: str) -> Path:
    path = bindir / name
    path.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(60)\n")
    path.chmod(0o755)
    return path


def _orphan(argv: list[str], cwd: Path) -> int:
    """Start ``argv`` in ``cwd`` as a process that is *not* our descendant (its parent exits)."""
    quoted = " ".join(f"'{a}'" for a in argv)
    out = subprocess.run(
        ["sh", "-c", f"cd '{cwd}' && {quoted} >/dev/null 2>&1 </dev/null & echo $!"],
        capture_output=True,
        text=True,
        check=True,
        timeout=10,
    )
    pid = int(out.stdout.strip())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # until exec has replaced sh's fork
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            break
        if argv[0].encode() in cmdline:
            break
        time.sleep(0.02)
    return pid


@pytest.fixture
def orphans() -> Iterator[list[int]]:
    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _gone(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and Path(f"/proc/{pid}/cmdline").exists():
        if Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z":
            break
        time.sleep(0.02)


def test_a_terminal_claude_in_the_project_owns_it(tmp_path: Path, orphans: list[int]) -> None:
    project = tmp_path / "project"
    project.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    claude = _fake_cli(tmp_path, "claude")
    assert not ClaudeAdapter.is_cwd_externally_owned(str(project), SID)

    pid = _orphan([str(claude)], project)
    orphans.append(pid)
    assert ClaudeAdapter.is_cwd_externally_owned(str(project), SID)
    assert ClaudeAdapter.is_cwd_externally_owned(str(project), None)
    assert not ClaudeAdapter.is_cwd_externally_owned(str(elsewhere), SID)
    assert not CodexAdapter.is_cwd_externally_owned(str(project), SID)  # another vendor's CLI
    _gone(pid)
    assert not ClaudeAdapter.is_cwd_externally_owned(str(project), SID)


def test_a_terminal_resuming_another_session_does_not_own_this_one(
    tmp_path: Path, orphans: list[int]
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    claude = _fake_cli(tmp_path, "claude")
    orphans.append(_orphan([str(claude), "--resume", "another-session"], project))
    assert not ClaudeAdapter.is_cwd_externally_owned(str(project), SID)
    assert ClaudeAdapter.is_cwd_externally_owned(str(project), "another-session")
    assert ClaudeAdapter.is_cwd_externally_owned(str(project), None)


def test_codex_resume_subcommand_names_the_session(tmp_path: Path, orphans: list[int]) -> None:
    project = tmp_path / "project"
    project.mkdir()
    codex = _fake_cli(tmp_path, "codex")
    orphans.append(_orphan([str(codex), "resume", SID], project))
    assert CodexAdapter.is_cwd_externally_owned(str(project), SID)
    assert not CodexAdapter.is_cwd_externally_owned(str(project), "other")


def test_codex_daemon_left_by_its_tui_is_not_a_terminal(tmp_path: Path, orphans: list[int]) -> None:
    project = tmp_path / "project"
    project.mkdir()
    codex = _fake_cli(tmp_path, "codex")
    orphans.append(
        _orphan([str(codex), "app-server", "--listen", "unix://", "--managed-daemon"], project)
    )
    assert not CodexAdapter.is_cwd_externally_owned(str(project), SID)
    orphans.append(_orphan([str(codex)], project))
    assert CodexAdapter.is_cwd_externally_owned(str(project), SID)


def test_our_own_children_are_corral_writing_not_a_terminal(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    claude = _fake_cli(tmp_path, "claude")
    child = subprocess.Popen([str(claude)], cwd=project)
    try:
        time.sleep(0.3)
        assert not ClaudeAdapter.is_cwd_externally_owned(str(project), SID)
    finally:
        child.kill()
        child.wait(10)


def test_program_names_under_a_launcher() -> None:
    assert program_name(["/usr/bin/node", "/x/node_modules/.bin/qwen", "--acp"]) == "qwen"
    assert program_name(["node", "--no-warnings", "/x/bin/codex.js", "resume"]) == "codex"
    assert program_name(["/opt/venv/bin/python3.11", "/opt/venv/bin/hermes"]) == "hermes"
    assert program_name(["/x/claude.exe", "-p"]) == "claude"
    assert program_name([]) is None


def test_session_flags() -> None:
    assert names_other_session(["--resume", "b"], "a", ("--resume",))
    assert not names_other_session(["--resume=a"], "a", ("--resume",))
    assert not names_other_session(["--continue"], "a", ("--resume",))  # names none: holds it
    # pi takes a session file path or a partial id
    assert not names_other_session(["--session", f"/s/2026_{SID}.jsonl"], SID, ("--session",))
    assert not names_other_session(["--session", SID[:8]], SID, ("--session",))


@pytest.mark.parametrize(
    ("cls", "argv", "kind"),
    [
        (ClaudeAdapter, ["claude", "--resume", SID], "persistent"),
        (CodexAdapter, ["codex", "resume", SID], "persistent"),
        (CodexExecAdapter, ["codex", "resume", SID], "per-turn"),
        (QwenAdapter, ["qwen", "--resume", SID], "persistent"),
        (QwenAcpAdapter, ["qwen", "--resume", SID], "persistent"),
        (GeminiAdapter, ["gemini", "--resume", SID], "persistent"),
        (OpenCodeAdapter, ["opencode", "--session", SID], "persistent"),
        (PiAdapter, ["pi", "--session", SID], "persistent"),
        (HermesAdapter, ["hermes", "--resume", SID], "persistent"),
    ],
)
def test_resume_commands(cls: type[ClaudeAdapter], argv: list[str], kind: str) -> None:
    assert cls.terminal_resume_command(SID, cwd="/tmp") == argv
    assert cls.terminal_resume_command(SID, cwd="/tmp", binary="/opt/x")[0] == "/opt/x"
    assert cls.handoff_kind == kind
    assert cls.supports_handoff()


@pytest.mark.parametrize("bad", ["--help", "", "a b", "x;rm -rf /", "-r"])
def test_a_session_id_that_is_not_one_is_refused(bad: str) -> None:
    with pytest.raises(ConfigError, match="not a session id"):
        ClaudeAdapter.terminal_resume_command(bad, cwd="/tmp")


@pytest.mark.parametrize("kind", ["flock", "lockf"])
def test_a_vendor_writer_lock_held_by_another_process_owns_the_session(
    tmp_path: Path, kind: str
) -> None:
    from corral._process._scan import lock_held

    lock = tmp_path / "thread-writer-locks" / f"{SID}.lock"
    lock.parent.mkdir()
    lock.touch()
    assert not lock_held(lock)
    assert not lock_held(tmp_path / "missing.lock")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl,sys,time\n"
            f"f=open({str(lock)!r},'r+')\n"
            f"fcntl.{kind}(f, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\ntime.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert lock_held(lock)
        env = {"CODEX_HOME": str(tmp_path)}
        assert CodexAdapter.is_cwd_externally_owned(str(tmp_path), SID, env=env)
        assert not CodexAdapter.is_cwd_externally_owned(str(tmp_path), "another", env=env)
    finally:
        holder.kill()
        holder.wait(10)
        if holder.stdout is not None:
            holder.stdout.close()
    assert not lock_held(lock)
