"""A wired project's interactive session, under a pseudo-terminal, shows up live on the board.

Claude Code, opencode, Gemini CLI and Codex are started as a person would start them (their TUI,
on a PTY) in a project wired by ``corral wire``, against the scripted model (``write-file``). The
board must see the session start, the write as a running line and then as a completed event, the
agent going idle, and the session's end. ``unwire`` must then restore the project's files byte
for byte. Gemini and Codex run a project's hooks only once a person has trusted the project; the
tests write that trust where the CLI keeps it. Qwen Code is checked headless (``-p``), many times
over: it once lost an event now and then.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _board_helpers import BoardFollower, Event, PtyAgent, board_service

from conftest import base_env, run_cli
from corral.board import _wire
from corral.redirect import Redirection, redirect_for
from corral.testing import FakeModelServer

pytestmark = pytest.mark.realcli

PROMPT = "Create a file named hello.txt in the current directory containing exactly: hi"


@pytest.fixture
def board(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, BoardFollower]]:
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path / "corral-home"))
    with board_service(tmp_path / "board.db") as url:
        follower = BoardFollower(url)
        try:
            yield url, follower
        finally:
            follower.stop()


def sha(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def _index(events: list[Event], pred: Callable[[Event], bool]) -> int:
    return next(i for i, e in enumerate(events) if pred(e))


def assert_live_sequence(
    events: list[Event], *, kind: str = "edit", session: bool = True, end: bool = True
) -> None:
    """session < running <kind> on hello.txt < completed <kind> (ok) < idle < end, one session."""
    order = [(e["kind"], e.get("running")) for e in events]
    marks = []
    if session:
        marks.append(_index(events, lambda e: e["kind"] == "session"))
    marks.append(
        _index(
            events,
            lambda e: e["kind"] == kind and e.get("running") and "hello.txt" in e["summary"],
        )
    )
    marks.append(
        _index(events, lambda e: e["kind"] == kind and not e.get("running") and e.get("ok"))
    )
    marks.append(_index(events, lambda e: e["kind"] == "idle"))
    if end:
        marks.append(_index(events, lambda e: e["kind"] == "end"))
    assert marks == sorted(marks) and len(set(marks)) == len(marks), order
    assert len({e["session"] for e in events}) == 1, events


def has(kind: str) -> Callable[[list[Event]], bool]:
    return lambda events: any(e["kind"] == kind for e in events)


@contextlib.contextmanager
def redirected(cli: str, tmp_path: Path) -> Iterator[Redirection]:
    """``cli`` redirected to the scripted model (``write-file``), its home under ``tmp_path``."""
    with FakeModelServer("write-file") as model:
        redirect = redirect_for(
            cli, base_url=model.base_url, model="fake-model", api_key="test",
            home=tmp_path / "home",
        )  # fmt: skip
        redirect.apply()
        yield redirect


def tui_env(redirect: Redirection) -> dict[str, str]:
    return redirect.environ({**base_env(), "TERM": "xterm-256color"})


def run_wired_session(
    agent: str,
    argv: list[str],
    env: dict[str, str],
    repo: Path,
    follower: BoardFollower,
    *,
    idle_timeout: float,
    exit_keys: tuple[str, ...] = ("/exit", "\r"),
) -> list[Event]:
    """Run the TUI until the board shows it idle, check the write, leave by typing ``exit_keys``
    (one second apart, as a person types them) and return the board's events once it shows the
    end."""
    tty = PtyAgent(argv, env=env, cwd=repo)
    try:
        follower.wait(has("idle"), idle_timeout)
        hello = repo / "hello.txt"
        deadline = time.monotonic() + 10
        while not hello.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert hello.read_text().strip() == "hi"
        # Leave the way a person does; the TUI can be slow to take the keys under load.
        for _ in range(3):
            for i, key in enumerate(exit_keys):
                if i:
                    time.sleep(1)
                if not tty.alive():
                    break
                tty.type(key)
            if tty.wait_exit(15):
                break
        assert not tty.alive(), f"{agent} did not exit:\n{tty.screen_tail()}"
        return follower.wait(has("end"), 30)
    finally:
        tty.kill()


def test_claude_code_session_on_the_board(
    board: tuple[str, BoardFollower],
    git_repo: Path,
    tmp_path: Path,
    agent_bin: Callable[[str], Path],
) -> None:
    binary = agent_bin("claude")
    url, follower = board
    settings = git_repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(b'{\n  "permissions": {"allow": ["Bash(ls:*)"]}\n}\n')
    original = sha(settings)

    wired = _wire.apply(_wire.plan("claude-code", git_repo, url=url))
    assert [e["path"] for e in wired] == [".claude/settings.json"]
    assert _wire.plan("claude-code", git_repo, url=url).edits == ()  # wiring twice: no change

    home = tmp_path / "home"
    with redirected("claude", tmp_path) as redirect:
        # A person has answered the first-run questions already: onboarding, key, folder trust.
        (home / ".claude" / ".claude.json").write_text(
            json.dumps(
                {
                    "hasCompletedOnboarding": True,
                    "customApiKeyResponses": {"approved": ["test"], "rejected": []},
                    "projects": {
                        str(git_repo): {
                            "hasTrustDialogAccepted": True,
                            "hasCompletedProjectOnboarding": True,
                        }
                    },
                }
            )
        )
        env = tui_env(redirect)
        argv = [str(binary), *redirect.argv, "--permission-mode", "acceptEdits", PROMPT]
        events = run_wired_session("claude", argv, env, git_repo, follower, idle_timeout=90)

    assert_live_sequence(events)
    restored = _wire.unwire("claude-code", git_repo)
    assert [(r.path, r.action) for r in restored] == [(".claude/settings.json", "restored")]
    assert sha(settings) == original


@pytest.mark.timeout(300)
def test_opencode_session_on_the_board(
    board: tuple[str, BoardFollower],
    git_repo: Path,
    tmp_path: Path,
    agent_bin: Callable[[str], Path],
) -> None:
    binary = agent_bin("opencode")
    url, follower = board
    plugin = git_repo / ".opencode" / "plugin" / "corral-board.js"

    wired = _wire.apply(_wire.plan("opencode", git_repo, url=url))
    assert [e["path"] for e in wired] == [".opencode/plugin/corral-board.js"]
    assert _wire.plan("opencode", git_repo, url=url).edits == ()

    with redirected("opencode", tmp_path) as redirect:
        env = tui_env(redirect)
        argv = [str(binary), *redirect.argv, "--prompt", PROMPT]
        events = run_wired_session("opencode", argv, env, git_repo, follower, idle_timeout=200)

    assert_live_sequence(events)
    assert plugin.exists()
    restored = _wire.unwire("opencode", git_repo)
    assert [(r.path, r.action) for r in restored] == [
        (".opencode/plugin/corral-board.js", "removed")
    ]
    assert not plugin.exists()


@pytest.mark.timeout(300)
def test_gemini_session_on_the_board(
    board: tuple[str, BoardFollower],
    git_repo: Path,
    tmp_path: Path,
    agent_bin: Callable[[str], Path],
) -> None:
    binary = agent_bin("gemini")
    url, follower = board
    settings = git_repo / ".gemini" / "settings.json"

    wired = _wire.apply(_wire.plan("gemini", git_repo, url=url))
    assert [e["path"] for e in wired] == [".gemini/settings.json"]
    assert _wire.plan("gemini", git_repo, url=url).edits == ()
    # Gemini's runner counts a hook's timeout in milliseconds.
    hooks = json.loads(settings.read_text())["hooks"]
    assert {h["timeout"] for entries in hooks.values() for e in entries for h in e["hooks"]} == {
        5000
    }

    home = tmp_path / "home"
    with redirected("gemini", tmp_path) as redirect:
        # A person has trusted the folder (Gemini runs no project hook in an untrusted one).
        (home / ".gemini" / "trustedFolders.json").write_text(
            json.dumps({str(git_repo): "TRUST_FOLDER"})
        )
        env = tui_env(redirect)
        argv = [str(binary), *redirect.argv, "--approval-mode", "auto_edit", "-i", PROMPT]
        events = run_wired_session(
            "gemini", argv, env, git_repo, follower, idle_timeout=150, exit_keys=("/quit", "\r")
        )

    assert_live_sequence(events)
    restored = _wire.unwire("gemini", git_repo)
    assert [(r.path, r.action) for r in restored] == [(".gemini/settings.json", "removed")]
    assert not settings.exists() and not settings.parent.exists()


@pytest.mark.timeout(300)
def test_codex_session_on_the_board(
    board: tuple[str, BoardFollower],
    git_repo: Path,
    tmp_path: Path,
    agent_bin: Callable[[str], Path],
) -> None:
    binary = agent_bin("codex")
    url, follower = board
    hooks_file = git_repo / ".codex" / "hooks.json"

    wired = _wire.apply(_wire.plan("codex", git_repo, url=url))
    assert [e["path"] for e in wired] == [".codex/hooks.json"]
    assert _wire.plan("codex", git_repo, url=url).edits == ()

    home = tmp_path / "home"
    with redirected("codex", tmp_path) as redirect:
        # A person has trusted the project (Codex loads no project hook otherwise) and reviewed
        # its hooks in /hooks; the review is stood in for by --dangerously-bypass-hook-trust.
        (home / ".codex" / "config.toml").write_text(
            f'[projects.{json.dumps(str(git_repo))}]\ntrust_level = "trusted"\n'
        )
        env = tui_env(redirect)
        argv = [
            str(binary),
            *redirect.argv,
            "--dangerously-bypass-hook-trust",
            "--dangerously-bypass-approvals-and-sandbox",
            PROMPT,
        ]
        events = run_wired_session("codex", argv, env, git_repo, follower, idle_timeout=120)

    # Codex writes the file with its shell tool: a command on the board, not an edit.
    assert_live_sequence(events, kind="command")
    restored = _wire.unwire("codex", git_repo)
    assert [(r.path, r.action) for r in restored] == [(".codex/hooks.json", "removed")]
    assert not hooks_file.exists()


@pytest.mark.timeout(200)
def test_qwen_headless_run_on_the_board(
    board: tuple[str, BoardFollower],
    git_repo: Path,
    tmp_path: Path,
    agent_bin: Callable[[str], Path],
) -> None:
    """Qwen Code ``-p`` on a wired project: running edit, completed edit, idle, in that order.

    Qwen fires no SessionStart / SessionEnd in ``-p``. Its runner counts a hook's timeout in
    milliseconds: with the ``5`` wire used to write, the emitter was SIGTERMed while it started
    and about one run in five lost an event."""
    binary = agent_bin("qwen")
    url, follower = board
    settings = git_repo / ".qwen" / "settings.json"
    _wire.apply(_wire.plan("qwen", git_repo, url=url))
    wired_bytes = settings.read_bytes()

    with redirected("qwen", tmp_path) as redirect:
        env = redirect.environ(base_env())
        argv = [str(binary), *redirect.argv, "-p", PROMPT, "--yolo"]
        run = run_cli(argv, env=env, cwd=git_repo, timeout=120, label="qwen-wired")
        assert run.returncode == 0, run.describe()
        events = follower.wait(has("idle"), 30)

    assert (git_repo / "hello.txt").read_text().strip() == "hi"
    assert_live_sequence(events, session=False, end=False)
    assert settings.read_bytes() == wired_bytes  # Qwen left the wired file as it was
    restored = _wire.unwire("qwen", git_repo)
    assert [(r.path, r.action) for r in restored] == [(".qwen/settings.json", "removed")]


def run_qwen_tui(
    binary: Path, git_repo: Path, tmp_path: Path, follower: BoardFollower
) -> list[Event]:
    """Qwen Code's TUI on a PTY, left with Ctrl-C twice (it did not take a typed ``/quit`` from
    the PTY)."""
    with redirected("qwen", tmp_path) as redirect:
        env = tui_env(redirect)
        argv = [str(binary), *redirect.argv, "--approval-mode", "auto-edit", "-i", PROMPT]
        return run_wired_session(
            "qwen", argv, env, git_repo, follower, idle_timeout=150, exit_keys=("\x03", "\x03")
        )


@pytest.mark.timeout(300)
def test_qwen_session_on_the_board(
    board: tuple[str, BoardFollower],
    git_repo: Path,
    tmp_path: Path,
    agent_bin: Callable[[str], Path],
) -> None:
    binary = agent_bin("qwen")
    url, follower = board
    settings = git_repo / ".qwen" / "settings.json"
    _wire.apply(_wire.plan("qwen", git_repo, url=url))
    wired_bytes = settings.read_bytes()

    events = run_qwen_tui(binary, git_repo, tmp_path, follower)

    assert_live_sequence(events)
    assert settings.read_bytes() == wired_bytes
    restored = _wire.unwire("qwen", git_repo)
    assert [(r.path, r.action) for r in restored] == [(".qwen/settings.json", "removed")]


@pytest.mark.timeout(300)
def test_a_qwen_session_start_that_reports_late_still_comes_first(
    board: tuple[str, BoardFollower],
    git_repo: Path,
    tmp_path: Path,
    agent_bin: Callable[[str], Path],
) -> None:
    """Qwen Code's TUI fires SessionStart without awaiting its hook and sends the first prompt
    (its first tool call's hook ran 250 ms later). A slow start for the SessionStart emitter (a
    loaded machine; here a second's sleep before it) once let the edit reach the board first."""
    binary = agent_bin("qwen")
    url, follower = board
    settings = git_repo / ".qwen" / "settings.json"
    _wire.apply(_wire.plan("qwen", git_repo, url=url))
    wired = json.loads(settings.read_text())
    [entry] = [e for e in wired["hooks"]["SessionStart"] if _wire.TAG in json.dumps(e)]
    entry["hooks"][0]["command"] = "sleep 1; " + entry["hooks"][0]["command"]
    settings.write_text(json.dumps(wired, indent=2) + "\n")

    events = run_qwen_tui(binary, git_repo, tmp_path, follower)

    assert_live_sequence(events)
