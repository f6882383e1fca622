"""A built-in id resolves without building the registry (``registry/_builtin.py``, decision 039),
and gets exactly the registry's answer; everything else still goes through the registry."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from corral.adapters import ALIASES, BUILTIN_ADAPTERS, NOT_RUNNABLE
from corral.cli._run_main import adapter_class
from corral.errors import AdapterNotFoundError
from corral.registry import CheckResult, Profile, Registry, record_verify, save_profile
from corral.registry._builtin import (
    BUILTIN_DIR,
    builtin_id,
    builtin_manifest,
    load_builtin_manifests,
    resolve_builtin,
)

NAMES = [*BUILTIN_ADAPTERS, *(a for names in ALIASES.values() for a in names)]

# An entry point that tries to take built-in names (an id and an alias) besides its own.
PLUGIN = """
from corral.testing.scripted_adapter import ScriptedAdapter


class EchoPoint(ScriptedAdapter):
    agent_id = "echo-point"
    display_name = "Echo (entry point)"


class Squatter(ScriptedAdapter):
    agent_id = "squatter"
    display_name = "Takes built-in names"


class FakeClaude(ScriptedAdapter):
    agent_id = "claude-code"
    display_name = "Not Claude Code"


def register_adapters(register):
    register(EchoPoint)
    register(Squatter, aliases=("claude", "codex-exec", "squat"))
    register(FakeClaude)
"""


@pytest.fixture
def plugin_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A real entry point: a ``*.dist-info`` on ``sys.path``, read by ``importlib.metadata``."""
    site = tmp_path / "site"
    (site / "corral_builtin_plugin").mkdir(parents=True)
    (site / "corral_builtin_plugin" / "__init__.py").write_text(textwrap.dedent(PLUGIN))
    dist = site / "corral_builtin_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: corral-builtin-plugin\nVersion: 0.1\n"
    )
    (dist / "entry_points.txt").write_text(
        "[corral.adapters]\nsquat = corral_builtin_plugin:register_adapters\n"
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delenv("CORRAL_EXTRA_ADAPTERS", raising=False)
    return site


def test_every_builtin_manifest_file_is_named_after_its_id() -> None:
    # ``builtin_manifest`` reads ``builtin/<id>.json`` alone; the registry keys by the parsed id.
    for path in sorted(Path(BUILTIN_DIR).glob("*.json")):
        manifest = builtin_manifest(path.stem) if path.stem in BUILTIN_ADAPTERS else None
        assert manifest is None or manifest.id == path.stem, path
    files = sorted(Path(BUILTIN_DIR).glob("*.json"), key=lambda p: p.name)
    assert [m.id for m in load_builtin_manifests()] == [p.stem for p in files]
    from importlib import resources

    assert Path(str(resources.files("corral.registry") / "builtin")) == Path(BUILTIN_DIR)


@pytest.mark.parametrize("name", NAMES)
def test_a_builtin_gets_the_registrys_answer(name: str) -> None:
    registry = Registry()
    assert resolve_builtin(name) is registry.resolve(name)
    assert builtin_manifest(name) == registry.manifest(name)
    assert adapter_class(name) is registry.resolve(name)


@pytest.mark.parametrize("name", ["nosuch", *NOT_RUNNABLE, "example-plain-argv"])
def test_anything_else_is_the_registrys_to_answer(name: str) -> None:
    assert builtin_id(name) is None
    assert resolve_builtin(name) is None and builtin_manifest(name) is None


def test_an_unknown_id_is_still_refused_as_before() -> None:
    with pytest.raises(AdapterNotFoundError) as info:
        adapter_class("nosuch")
    assert info.value.exit_code == 4 and info.value.reason is None
    with pytest.raises(AdapterNotFoundError) as info:
        adapter_class("droid")  # listed, cannot run: the registry's reason
    assert info.value.reason == NOT_RUNNABLE["droid"]


def test_an_entry_point_adapter_is_still_found(plugin_site: Path) -> None:
    cls = adapter_class("echo-point")
    assert cls.__module__ == "corral_builtin_plugin" and cls.agent_id == "echo-point"
    assert adapter_class("squat").agent_id == "squatter"  # its own alias works


def test_an_entry_point_cannot_take_a_builtin_name(plugin_site: Path) -> None:
    registry = Registry()
    for name in ("claude", "claude-code", "codex-exec"):
        assert registry.resolve(name).__module__.startswith("corral.adapters."), name
        assert resolve_builtin(name) is registry.resolve(name)
    problems = " | ".join(p.message for p in registry.problems)
    assert "alias 'claude' is the name of a built-in adapter" in problems
    assert "alias 'codex-exec' is the name of a built-in adapter" in problems
    assert "id 'claude-code' collides with a built-in adapter" in problems


def test_extra_adapters_may_replace_a_builtin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORRAL_EXTRA_ADAPTERS", "corral.testing.scripted_adapter:ScriptedAdapter")
    assert builtin_id("claude-code") is None  # the registry answers while the variable is set
    assert adapter_class("claude-code").agent_id == "claude-code"  # still the built-in here
    monkeypatch.setenv("CORRAL_EXTRA_ADAPTERS", " , ")
    assert builtin_id("claude") == "claude-code"  # names nothing: as if unset


def _lean_run(args: list[str], home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {"CORRAL_HOME": str(home), "PATH": "/usr/bin:/bin", "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "corral", "run", *args],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def _imported(stderr: str) -> list[str]:
    return [
        line.rsplit("|", 1)[1].strip()
        for line in stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    ]


def test_the_lean_run_finds_an_entry_point_adapter(plugin_site: Path, tmp_path: Path) -> None:
    done = _lean_run(["echo-point", "hi", "--json"], tmp_path / "home", PYTHONPATH=str(plugin_site))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "echo: hi" in done.stdout
    assert "typer" not in {m.split(".")[0] for m in _imported(done.stderr)}


def test_a_lean_builtin_run_builds_no_registry(tmp_path: Path) -> None:
    """``corral run pi`` with a missing binary: refused at the spawn, without an entry-point scan."""
    done = _lean_run(["pi", "hi", "--json", "--binary", str(tmp_path / "no-pi")], tmp_path)
    assert done.returncode != 0
    modules = set(_imported(done.stderr))
    assert "corral.protocols.pi_rpc" in modules  # the adapter was loaded (import_module: unlisted)
    for heavy in ("importlib.metadata", "corral.registry._registry", "corral.adapters.codex"):
        assert heavy not in modules, heavy
    assert not {m for m in modules if m.split(".")[0] in ("typer", "pydantic", "acp", "httpx")}


@pytest.mark.parametrize("name", ["claude-code", "claude"])
def test_the_lean_run_still_refuses_an_unverified_builtin(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A verified adapter whose profile changed re-verifies before anything is spawned; when that
    fails the run is refused and the agent never starts (also when named by its alias)."""
    home = tmp_path / "home"
    monkeypatch.setenv("CORRAL_HOME", str(home))
    manifest = builtin_manifest("claude-code")
    assert manifest is not None
    ok = CheckResult(adapter_id="claude-code", step="verify", ok=True, detail="ok")
    record_verify(manifest, ok, home=home)
    save_profile("claude-code", Profile(model="other"), home=home)  # stale now
    marker = tmp_path / "spawned"
    agent = tmp_path / "agent.sh"
    agent.write_text(f"#!/bin/sh\ntouch {marker}\n")
    agent.chmod(0o755)
    env: dict[str, Any] = {"CORRAL_CACHE_DIR": str(tmp_path / "no-cache")}
    done = _lean_run([name, "hi", "--json", "--binary", str(agent)], home, **env)
    assert done.returncode == 1, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if not line.startswith("import time:")]
    assert "error:" in lines[-1] and "claude-code" in lines[-1]
    assert not marker.exists()  # the agent never ran
    modules = set(_imported(done.stderr))
    assert "corral.cli._run_fast" in modules and "typer" not in modules
    assert os.environ.get("CORRAL_HOME") == str(home)
