"""``corral run``'s early spawn (``cli/_run_early.py``): what it refuses and declines before any
spawn, and a whole run through it on the stand-in stream-json CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import corral._process._early as early_module
from corral.cli._run_early import spawn_for_run
from corral.errors import InvalidPromptError

BAD_CLI = Path(__file__).parents[1] / "process" / "_bad_cli.py"


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[tuple[str, ...]]:
    """Every early spawn asked for (none is started); an empty ``CORRAL_HOME``."""
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CORRAL_EXTRA_ADAPTERS", raising=False)
    asked: list[tuple[str, ...]] = []

    def spawn(argv: Any, env: Any, cwd: str, *, prompted: bool = False) -> None:
        asked.append((*argv, f"prompted={prompted}"))

    monkeypatch.setattr(early_module, "spawn_early", spawn)
    return asked


@pytest.mark.parametrize(
    "extra",
    [
        {"intent": "work"},
        {"allowed_commands": "git"},
        {"vendor_permission_mode": "plan"},
        {"resume": "0b9c7f0e-1111-2222-3333-444444444444"},
        {"effort": "high"},
        {"image": [Path("a.png")]},
        {"idle_timeout": -1.0},
    ],
)
def test_options_an_early_launch_does_not_carry_take_todays_path(
    spawned: list[tuple[str, ...]], tmp_path: Path, extra: dict[str, Any]
) -> None:
    assert spawn_for_run("claude-code", "hi", {"cwd": tmp_path, **extra}) is None
    assert spawned == []


def test_an_invalid_prompt_is_refused_before_any_spawn(
    spawned: list[tuple[str, ...]], tmp_path: Path
) -> None:
    with pytest.raises(InvalidPromptError):
        spawn_for_run("claude-code", "   ", {"cwd": tmp_path})
    assert spawned == []


def test_a_stale_verification_is_not_early(
    spawned: list[tuple[str, ...]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import corral.registry._gate as gate

    checked: list[str] = []

    def stale(adapter_id: str, *, home: Path | None = None) -> tuple[object, object]:
        checked.append(adapter_id)
        return object(), object()  # a record, and a manifest to verify again first

    monkeypatch.setattr(gate, "gate_check", stale)
    assert spawn_for_run("claude", "hi", {"cwd": tmp_path}) is None
    assert checked == ["claude-code"]  # an alias is gated as its id
    assert spawned == []


def test_adapters_without_a_hook_and_bad_directories_are_not_early(
    spawned: list[tuple[str, ...]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert spawn_for_run("opencode", "hi", {"cwd": tmp_path}) is None
    assert spawn_for_run("no-such-adapter", "hi", {"cwd": tmp_path}) is None
    assert spawn_for_run("claude-code", "hi", {"cwd": tmp_path / "missing"}) is None
    monkeypatch.setenv("CORRAL_EXTRA_ADAPTERS", "x.y:Z")  # the registry must answer
    assert spawn_for_run("claude-code", "hi", {"cwd": tmp_path}) is None
    assert spawned == []


def test_the_early_launch_is_the_adapters(spawned: list[tuple[str, ...]], tmp_path: Path) -> None:
    spawn_for_run(
        "claude",
        "hi",
        {"cwd": tmp_path, "model": "m1", "binary": "/opt/claude", "agent_arg": ["--x"]},
    )
    spawn_for_run("qwen", "hi", {"cwd": tmp_path, "binary": "/opt/qwen"})
    spawn_for_run("gemini-exec", "-hi", {"cwd": tmp_path, "binary": "/opt/gemini"})
    spawn_for_run("codex", "hi", {"cwd": tmp_path, "model": "m1", "binary": "/opt/codex"})
    spawn_for_run("codex-exec", "-hi", {"cwd": tmp_path, "binary": "/opt/codex"})
    (claude, qwen, gemini, codex, codex_exec) = spawned
    assert claude[0] == "/opt/claude"
    assert claude[-4:] == ("--model", "m1", "--x", "prompted=False")
    assert qwen[0] == "/opt/qwen" and "--approval-mode" in qwen
    assert gemini[-2:] == ("--prompt=-hi", "prompted=True")  # the turn starts at once
    assert codex == ("/opt/codex", "app-server", "prompted=False")  # the model: thread/start
    assert codex_exec[:3] == ("/opt/codex", "exec", "--json")
    assert codex_exec[-3:] == ("--", "-hi", "prompted=True")


def _stand_in(tmp_path: Path, mode: str) -> tuple[Path, Path]:
    """A ``--binary`` that ignores Claude Code's flags and runs the stand-in CLI; it notes each
    start in the returned file."""
    starts = tmp_path / "starts"
    script = tmp_path / "claude"
    script.write_text(f"#!/bin/sh\necho $$ >> {starts}\nexec {sys.executable} {BAD_CLI} {mode}\n")
    script.chmod(0o755)
    return script, starts


def _corral_run(tmp_path: Path, binary: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CORRAL_HOME": str(tmp_path / "home"), "COLUMNS": "1000"}
    env.pop("CORRAL_EXTRA_ADAPTERS", None)
    argv = [sys.executable, "-m", "corral", "run", "claude-code", "go", "--json"]
    argv += ["--binary", str(binary), "--cwd", str(tmp_path)]
    return subprocess.run(
        argv, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )


def test_a_run_through_the_early_spawn_starts_the_agent_once(tmp_path: Path) -> None:
    binary, starts = _stand_in(tmp_path, "ok")
    proc = _corral_run(tmp_path, binary)
    assert proc.returncode == 0, proc.stderr
    types = [json.loads(line)["event"]["type"] for line in proc.stdout.splitlines()]
    assert types[0] == "session.started" and "turn.completed" in types
    assert types[-1] == "session.ended"
    assert len(starts.read_text().split()) == 1  # the early process was the driver's


def test_an_agent_that_dies_at_start_fails_the_run(tmp_path: Path) -> None:
    binary, starts = _stand_in(tmp_path, "die-at-start")
    proc = _corral_run(tmp_path, binary)
    assert proc.returncode != 0
    assert "error:" in proc.stderr
    assert len(starts.read_text().split()) == 1


def test_a_missing_binary_gives_todays_error(tmp_path: Path) -> None:
    proc = _corral_run(tmp_path, tmp_path / "no-such-claude")
    assert proc.returncode == 1
    assert "could not start" in proc.stderr and "no-such-claude" in proc.stderr


def test_the_early_spawn_happens_before_the_event_loop_is_imported(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from corral.cli._run_early import spawn_for_run\n"
        f"early = spawn_for_run('claude-code', 'hi', {{'binary': {sys.executable!r}, "
        f"'cwd': {str(tmp_path)!r}, 'agent_arg': ['-c', 'pass']}})\n"
        "heavy = {'asyncio', 'corral.adapters.base', 'corral.protocols.claude_stream_json',\n"
        "         'msgspec', 'corral.events', 'corral.manifests', 'typing', 'dataclasses'}\n"
        "print(early is not None, sorted(heavy & set(sys.modules)))\n"
    )
    env = {**os.environ, "CORRAL_HOME": str(tmp_path / "home")}
    env.pop("CORRAL_EXTRA_ADAPTERS", None)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.split() == ["True", "[]"]


@pytest.mark.parametrize("binary", [sys.executable, None], ids=["binary", "default-binary"])
@pytest.mark.parametrize(
    "adapter",
    [
        "claude-code",
        "qwen",
        "pi",
        "gemini",
        "hermes",
        "codex",
        "codex-exec",
        "gemini-exec",
        "opencode-run",
    ],
)
def test_with_no_verification_record_msgspec_is_not_loaded_at_the_spawn(
    tmp_path: Path, adapter: str, binary: str | None
) -> None:
    """Decision 049: the record's absence is checked without msgspec, the manifest model and the
    ``Launch`` values load nothing of msgspec, the event model or ``typing``; nor does finding
    the default binary (the pinned install, then PATH: ``registry/_resolve.py``). Decision 056:
    nor ``subprocess``, ``signal`` or ``pathlib``, finding the binary included. Decision 057: nor
    ``json`` (with ``re`` and ``enum``) for the pinned install's marker, nor ``contextlib``,
    ``functools``, ``collections`` or ``importlib`` (with ``warnings``)."""
    given = f"'binary': {binary!r}, " if binary else ""
    code = (
        "import sys\n"
        "import corral._process._early as e\n"
        "seen = []\n"
        "e.spawn_early = lambda argv, *a, **k: seen.append((argv[0], set(sys.modules)))\n"
        "from corral.cli._run_early import spawn_for_run\n"
        f"spawn_for_run({adapter!r}, 'hi', {{{given}'cwd': {str(tmp_path)!r}}})\n"
        "heavy = {'msgspec', 'corral.events', 'corral.manifests', 'typing', 'dataclasses',\n"
        "         'corral.registry._state', 'asyncio', 'subprocess', 'signal', 'threading',\n"
        "         'pathlib', 'json', 're', 'enum', 'contextlib', 'functools', 'collections',\n"
        "         'importlib', 'warnings'}\n"
        "print(len(seen), seen[0][0], sorted(heavy & seen[0][1]) if seen else None)\n"
    )
    env = {**os.environ, "CORRAL_HOME": str(tmp_path / "home")}
    env.pop("CORRAL_EXTRA_ADAPTERS", None)
    expected = binary
    if binary is None:  # the default binary: a pinned install, found by reading its marker
        env["CORRAL_AGENTS_DIR"] = str(tmp_path / "agents")
        expected = str(_pinned_install(tmp_path / "agents", _DEFAULT_PIN[adapter]))
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.split() == ["1", expected, "[]"]


_DEFAULT_PIN = {
    "claude-code": "claude",
    "qwen": "qwen",
    "pi": "pi",
    "gemini": "gemini",
    "hermes": "hermes",
    "codex": "codex",
    "codex-exec": "codex",
    "gemini-exec": "gemini",
    "opencode-run": "opencode",
}
"""The pin whose binary each early adapter starts when no ``--binary`` is given."""


def _pinned_install(root: Path, name: str) -> Path:
    """A complete pinned install of ``name`` under ``root`` (its marker and its binary)."""
    from corral.agents import get_pin
    from corral.agents._layout import Marker, write_marker

    pin = get_pin(name)
    directory = root / pin.name / pin.version
    bin_dir = directory / ("venv/bin" if pin.registry == "pypi" else "node_modules/.bin")
    bin_dir.mkdir(parents=True)
    binary = bin_dir / pin.bin
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    marker = Marker(
        name=pin.name,
        package=pin.package,
        version=pin.version,
        binary=str(binary),
        version_output=pin.version,
        installed_at="2026-01-01T00:00:00+00:00",
        seconds=1.0,
    )
    write_marker(directory, marker)
    return binary


def test_a_real_stale_record_is_not_early_and_a_fresh_one_is(
    spawned: list[tuple[str, ...]], tmp_path: Path
) -> None:
    """The gate's record is read in full whenever one exists: stale refuses the early spawn."""
    from datetime import UTC, datetime

    import msgspec

    from corral.registry._builtin import builtin_manifest
    from corral.registry._profiles import profile_key
    from corral.registry._state import VerifyRecord
    from corral.registry._verify_path import record_path

    home = tmp_path / "home"
    manifest = builtin_manifest("claude-code")
    assert manifest is not None
    path = record_path("claude-code", home)
    path.parent.mkdir(parents=True)

    def write(profile_hash: str | None) -> None:
        record = VerifyRecord(
            adapter_id="claude-code",
            profile_hash=profile_hash,
            ok=True,
            detail="ok",
            checked_at=datetime.now(UTC),
        )
        path.write_bytes(msgspec.json.encode(record))

    write("0" * 64)  # verified under another profile: stale
    assert spawn_for_run("claude-code", "hi", {"cwd": tmp_path}) is None
    assert spawned == []
    write(profile_key(manifest, home=home))  # verified under this one
    spawn_for_run("claude-code", "hi", {"cwd": tmp_path})
    assert len(spawned) == 1
