"""wire / unwire: idempotent, only our entries touched, files restored byte for byte."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from corral.board import _wire
from corral.errors import ConfigError


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def dirs(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_dir())


@pytest.mark.parametrize(
    ("agent", "path", "events"),
    [
        (
            "claude-code",
            ".claude/settings.json",
            {"PreToolUse", "PostToolUse", "Stop", "SessionEnd"},
        ),
        ("qwen", ".qwen/settings.json", {"PreToolUse", "PostToolUse", "Stop", "SessionStart"}),
        ("gemini", ".gemini/settings.json", {"BeforeTool", "AfterTool", "AfterAgent"}),
        ("codex", ".codex/hooks.json", {"PreToolUse", "PostToolUse", "Stop", "SessionEnd"}),
    ],
)
def test_hook_agents_keep_foreign_settings_and_restore_exactly(
    tmp_path: Path, agent: str, path: str, events: set[str]
) -> None:
    project = tmp_path / "p"
    target = project / path
    target.parent.mkdir(parents=True)
    original = b'{"model": "m",\n "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say hi"}]}]}}'
    target.write_bytes(original)
    before = digest(project)

    applied = _wire.apply(_wire.plan(agent, project))
    assert [e["path"] for e in applied] == [path]
    settings = json.loads(target.read_bytes())
    assert settings["model"] == "m"
    assert events <= set(settings["hooks"])
    stop_key = "AfterAgent" if agent == "gemini" else "Stop"
    commands = [h["command"] for e in settings["hooks"][stop_key] for h in e["hooks"]]
    assert any(_wire.TAG in c for c in commands)
    if agent != "gemini":
        assert commands[0] == "say hi"  # the user's own hook stays first

    wired = digest(project)
    second = _wire.plan(agent, project)
    assert second.edits == ()
    assert _wire.apply(second) == []
    assert digest(project) == wired

    results = _wire.unwire(agent, project)
    assert [(r.path, r.action) for r in results] == [(path, "restored")]
    assert target.read_bytes() == original
    assert digest(project) == before


@pytest.mark.parametrize(
    ("agent", "path", "timeout"),
    [
        ("claude", ".claude/settings.json", 5),  # seconds
        ("codex", ".codex/hooks.json", 3),  # seconds; Codex caps SessionEnd at 3
        ("gemini", ".gemini/settings.json", 5000),  # milliseconds
        ("qwen", ".qwen/settings.json", 5000),  # milliseconds (a Gemini CLI fork)
    ],
)
def test_each_hook_timeout_is_in_its_runners_unit(
    tmp_path: Path, agent: str, path: str, timeout: int
) -> None:
    project = tmp_path / "p"
    project.mkdir()
    _wire.apply(_wire.plan(agent, project))
    hooks = json.loads((project / path).read_text())["hooks"]
    ours = [h for entries in hooks.values() for e in entries for h in e["hooks"]]
    assert ours and {h["timeout"] for h in ours} == {timeout}


def test_the_hook_command_starts_immune_to_the_terminal_hanging_up(tmp_path: Path) -> None:
    """An ignored SIGHUP survives exec: a hook shell that is hung up on (the agent's terminal
    going away as it exits) neither kills the emitter nor loses its event."""
    import subprocess

    command = _wire.emitter_command("claude", url="http://127.0.0.1:9", token_file=tmp_path / "t")
    assert command.startswith("trap '' HUP; ")
    probe = (
        command.split("; ", 1)[0] + "; exec python3 -c 'import signal,sys; "
        "sys.stdout.write(str(signal.getsignal(signal.SIGHUP) == signal.SIG_IGN))'"
    )
    out = subprocess.run(["sh", "-c", probe], capture_output=True, text=True, timeout=10)
    assert out.stdout == "True", out


def test_opencode_plugin_is_created_and_removed_with_its_folders(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "README").write_text("x")
    wire_plan = _wire.plan("opencode", project, url="http://127.0.0.1:9/")
    _wire.apply(wire_plan)
    plugin = project / ".opencode" / "plugin" / "corral-board.js"
    source = plugin.read_text()
    assert 'const DEFAULT_URL = "http://127.0.0.1:9"' in source
    assert "__CORRAL" not in source
    assert _wire.plan("opencode", project, url="http://127.0.0.1:9/").edits == ()
    assert [r.action for r in _wire.unwire("opencode", project)] == ["removed"]
    assert dirs(project) == []
    assert digest(project) == {"README": hashlib.sha256(b"x").hexdigest()}


def test_unwire_refuses_a_file_changed_since_wire_unless_forced(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    _wire.apply(_wire.plan("claude", project))
    settings = project / ".claude" / "settings.json"
    settings.write_text(settings.read_text().replace('"timeout": 5', '"timeout": 6'))
    [refused] = _wire.unwire("claude", project)
    assert (refused.action, refused.reason) == ("refused", "changed since it was wired")
    assert settings.exists()
    [forced] = _wire.unwire("claude", project, force=True)
    assert forced.action == "removed"
    assert not (project / ".claude").exists()


def test_rewiring_after_a_user_edit_keeps_the_original_backup(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".claude").mkdir(parents=True)
    settings = project / ".claude" / "settings.json"
    settings.write_bytes(b"{}")
    _wire.apply(_wire.plan("claude", project, url="http://127.0.0.1:1"))
    _wire.apply(_wire.plan("claude", project, url="http://127.0.0.1:2"))  # a second address
    assert "127.0.0.1:2" in settings.read_text()
    _wire.unwire("claude", project)
    assert settings.read_bytes() == b"{}"


@pytest.mark.parametrize("agent", ["pi", "hermes", "kilo"])
def test_unobservable_agents_are_an_honest_no_op(tmp_path: Path, agent: str) -> None:
    wire_plan = _wire.plan(agent, tmp_path)
    assert not wire_plan.observable
    assert wire_plan.edits == ()
    assert "no live visibility" in wire_plan.message
    assert list(tmp_path.iterdir()) == []


def test_bad_input_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown agent 'nope'"):
        _wire.plan("nope", tmp_path)
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text("{not json")
    with pytest.raises(ConfigError, match="is not valid JSON"):
        _wire.plan("claude", tmp_path)
    (tmp_path / ".claude" / "settings.json").write_text('{"hooks": []}')
    with pytest.raises(ConfigError, match="'hooks' key is not an object"):
        _wire.plan("claude", tmp_path)
