"""The external-session index: incremental refresh (stat first), listing, filters, the CLI.

The home holds every recorded store (``corral record AGENT store``) at once, as a user's home
holds all of them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from corral import _db
from corral.adapters import _stores
from corral.errors import ConfigError
from corral.sessions._external import ExternalIndex

from ._recorded import ALL_CLIS, recorded_home

AGENTS = {"claude-code", "codex", "gemini", "qwen", "pi", "opencode", "hermes"}


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    env, _ = recorded_home(tmp_path)
    return env


@pytest.fixture
def index(tmp_path: Path) -> ExternalIndex:
    return ExternalIndex(_db.connect(tmp_path / "corral.db", synchronous="NORMAL"))


def test_cold_then_warm_refresh_reads_only_what_changed(
    home: dict[str, str], index: ExternalIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    cold = index.refresh(env=home)
    assert cold.files == cold.read >= len(ALL_CLIS)
    listed = index.sessions(env=home)
    assert {e.agent_id for e in listed} == AGENTS
    assert len(listed) == len(AGENTS)  # one session each (Gemini's resume stub merged)
    assert [e.mtime for e in listed] == sorted((e.mtime for e in listed), reverse=True)

    def no_reading(*args: object) -> object:
        raise AssertionError("a warm refresh read a file")

    monkeypatch.setattr("corral.sessions._external.headers", no_reading)
    warm = index.refresh(env=home)
    assert (warm.files, warm.read, warm.removed) == (cold.files, 0, 0)
    assert index.sessions(env=home) == listed


def test_a_grown_file_is_read_again_and_a_deleted_one_dropped(
    home: dict[str, str], index: ExternalIndex
) -> None:
    index.refresh(env=home)
    claude = next(e for e in index.sessions(env=home) if e.agent_id == "claude-code")
    with open(claude.path, "ab") as handle:
        handle.write(b'{"type": "mode", "mode": "normal"}\n')
    stats = index.refresh(env=home)
    assert stats.read == 1
    again = next(e for e in index.sessions(env=home) if e.agent_id == "claude-code")
    assert again.size == os.path.getsize(claude.path) > claude.size
    os.unlink(claude.path)
    stats = index.refresh(env=home)
    assert stats.removed == 1
    assert "claude-code" not in {e.agent_id for e in index.sessions(env=home)}


def test_filters_by_agent_and_cwd(home: dict[str, str], index: ExternalIndex) -> None:
    index.refresh(env=home)
    (codex,) = index.sessions(agent="codex", env=home)
    assert index.sessions(agent="codex-exec", env=home) == [codex]  # one store, two drivers
    assert codex.cwd is not None
    assert index.sessions(cwd=codex.cwd, env=home) == [codex]
    assert index.sessions(cwd="/nowhere/at/all", env=home) == []
    with pytest.raises(ConfigError, match="no session-store reader"):
        index.sessions(agent="kilo")


def test_another_homes_rows_are_not_listed(
    home: dict[str, str], index: ExternalIndex, tmp_path: Path
) -> None:
    index.refresh(env=home)
    other = {k: v.replace(home["HOME"], str(tmp_path / "other")) for k, v in home.items()}
    assert index.refresh(env=other).removed == 0  # a refresh of one home keeps the other's rows
    assert index.sessions(env=other) == []
    assert len(index.sessions(env=home)) == len(AGENTS)


def test_every_store_reader_is_wired_into_its_adapters() -> None:
    from corral.registry import Registry

    registry = Registry()
    for agent, module in _stores.STORE_MODULES.items():
        cls = registry.resolve(agent)
        assert cls.latest_sid_for_cwd("/nowhere", env={"HOME": "/nonexistent"}) is None, module
        assert list(cls.scan_external_sessions(env={"HOME": "/nonexistent"})) == []


def test_cli_lists_external_sessions(
    home: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from corral.cli import build_app

    for key, value in home.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path / "corral"))
    monkeypatch.setenv("CORRAL_DB", str(tmp_path / "corral" / "corral.db"))
    runner = CliRunner()
    result = runner.invoke(build_app(), ["sessions", "list", "--external", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert {r["agent_id"] for r in rows} == AGENTS
    result = runner.invoke(build_app(), ["sessions", "list", "--external", "--agent", "pi"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("pi ") and result.output.count("\n") == 1
    result = runner.invoke(build_app(), ["sessions", "list", "--agent", "pi"])
    assert result.exit_code != 0


def test_an_unreadable_database_is_said_and_its_rows_kept(
    home: dict[str, str], index: ExternalIndex
) -> None:
    index.refresh(env=home)
    (before,) = index.sessions(agent="opencode", env=home)
    with open(before.path, "r+b") as handle:  # the header page overwritten: not a database now
        handle.write(b"\x00garbage" * 20)
    stats = index.refresh(env=home)
    assert len(stats.problems) == 1 and stats.problems[0].startswith("opencode: ")
    assert index.sessions(agent="opencode", env=home) == [before]  # the last good reading
    from corral.adapters import _store_opencode

    assert list(_store_opencode.scan(home)) == []  # the hook itself lists nothing, never raises
