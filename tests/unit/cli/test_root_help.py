"""``corral --help`` is one text, whether the lean entry or Typer prints it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from corral.cli import build_app
from corral.cli._commands import COMMANDS
from corral.cli._root_help import root_help, terminal_width


@pytest.mark.parametrize("columns", [40, 60, 100, 200])
def test_lean_and_typer_print_the_same_help(columns: int) -> None:
    env = {**os.environ, "COLUMNS": str(columns)}
    lean = subprocess.run(
        [sys.executable, "-m", "corral", "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=True,
    ).stdout
    typer_help = CliRunner().invoke(build_app(), [], env={"COLUMNS": str(columns)}).output
    assert lean == typer_help
    assert lean == root_help(max(50, min(columns, 80) - 2))


def test_every_command_line_is_shown_whole() -> None:
    text = " ".join(root_help(60).split())
    for spec in COMMANDS:
        assert f"{spec.name} {spec.help}" in text
    assert all(len(line) <= 60 for line in root_help(60).splitlines())


def test_width_follows_columns_within_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "30")
    assert terminal_width() == 50
    monkeypatch.setenv("COLUMNS", "300")
    assert terminal_width() == 78


def test_version_is_printed_without_typer() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "corral", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    from corral import __version__

    assert proc.stdout == f"corral {__version__}\n"
