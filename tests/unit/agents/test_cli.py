"""``corral agents list|install`` through the real Typer app (no registry: an empty root)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from corral.cli import build_app
from corral.cli._common import run_guarded


def test_list_json_reports_every_pin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    result = CliRunner().invoke(
        build_app(), ["agents", "list", "--json", "--prefix", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [r["name"] for r in rows][:3] == ["claude", "codex", "opencode"]
    assert {r["source"] for r in rows} == {"missing"}


def test_install_unknown_name_is_bad_usage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        sys, "argv", ["corral", "agents", "install", "nope", "--prefix", str(tmp_path)]
    )
    assert run_guarded(build_app()) == 2
    assert not any(tmp_path.iterdir())
