"""Moving a pin rewrites one line of pins.toml and nothing else; ``corral agents pin`` does it."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from corral.agents import get_pin
from corral.agents._pin_edit import pins_path, set_version, write_version
from corral.agents._pins import parse_pins
from corral.cli import build_app
from corral.errors import ConfigError


def test_set_version_changes_exactly_that_agents_version_line() -> None:
    text = pins_path().read_text("utf-8")
    old = get_pin("qwen").version
    new = set_version(text, "qwen", "0.24.4")
    changed = [
        line
        for line in difflib.unified_diff(text.splitlines(), new.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    assert changed == [f'-version = "{old}"', '+version = "0.24.4"']
    after = {p.name: p for p in parse_pins(new)}
    before = {p.name: p for p in parse_pins(text)}
    assert after["qwen"].version == "0.24.4"
    assert {n: p for n, p in after.items() if n != "qwen"} == {
        n: p for n, p in before.items() if n != "qwen"
    }
    # comments (including the one right above kilo's table) survive
    assert [line for line in new.splitlines() if line.startswith("#")] == [
        line for line in text.splitlines() if line.startswith("#")
    ]


TOML = """\
# header comment
[agents.a]
registry = "npm"
package = "a-cli"
version = "1.0.0"   # kept comment
bins = ["a"]

[agents.b]  # b's comment
registry = "pypi"
package = "b-cli"
version = "2.0.0"
bins = ["b"]
"""


def test_only_the_named_table_is_touched_and_trailing_comments_stay() -> None:
    out = set_version(TOML, "a", "1.1.0")
    assert 'version = "1.1.0"   # kept comment' in out
    assert 'version = "2.0.0"' in out
    out = set_version(TOML, "b", "3.0.0rc1")
    assert 'version = "1.0.0"   # kept comment' in out
    assert out.endswith('version = "3.0.0rc1"\nbins = ["b"]\n')


@pytest.mark.parametrize(
    ("name", "version", "message"),
    [
        ("nope", "1.0.0", "no pinned agent named 'nope'"),
        ("a", "1.0.0\nbins = []", "is not a version"),
        ("a", '1"; x = "', "is not a version"),
        ("a", "", "is not a version"),
    ],
)
def test_bad_moves_are_refused(name: str, version: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        set_version(TOML, name, version)


def test_a_version_that_is_not_a_plain_line_is_refused() -> None:
    inline = TOML.replace('version = "2.0.0"', "version = '2.0.0'")
    with pytest.raises(ConfigError, match="no plain version line"):
        set_version(inline, "b", "2.1.0")


def test_write_version_rewrites_the_file_and_returns_the_old_version(tmp_path: Path) -> None:
    path = tmp_path / "pins.toml"
    path.write_text(TOML)
    assert write_version("b", "2.5.0", path) == "2.0.0"
    assert {p.name: p.version for p in parse_pins(path.read_text())} == {"a": "1.0.0", "b": "2.5.0"}


def test_agents_pin_cli_moves_the_pin_and_prints_the_re_record_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "pins.toml"
    copy.write_text(pins_path().read_text("utf-8"))
    monkeypatch.setattr("corral.agents._pin_edit.pins_path", lambda: copy)
    result = CliRunner().invoke(build_app(), ["agents", "pin", "qwen", "0.99.1", "--no-install"])
    assert result.exit_code == 0, result.output
    assert f"qwen {get_pin('qwen').version} → 0.99.1" in result.output
    assert {p.name: p.version for p in parse_pins(copy.read_text())}["qwen"] == "0.99.1"
    assert "corral record qwen all" in result.output
    assert "corral record qwen-acp all" in result.output
    assert "corral conformance --write-docs docs/compatibility.md" in result.output
    # neither a version nor --latest, or both: bad usage, nothing written
    before = copy.read_text()
    for args in (["agents", "pin", "qwen"], ["agents", "pin", "qwen", "1.0.0", "--latest"]):
        assert CliRunner().invoke(build_app(), [*args, "--no-install"]).exit_code != 0
    assert copy.read_text() == before


def test_a_version_that_does_not_install_leaves_the_pin_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    copy = tmp_path / "pins.toml"
    copy.write_text(pins_path().read_text("utf-8"))
    monkeypatch.setattr("corral.agents._pin_edit.pins_path", lambda: copy)
    npm = tmp_path / "bin" / "npm"
    npm.parent.mkdir()
    npm.write_text("#!/bin/sh\necho 'npm error code ETARGET'\nexit 1\n")
    npm.chmod(0o755)
    monkeypatch.setenv("PATH", f"{npm.parent}{os.pathsep}{os.environ['PATH']}")
    before = copy.read_text()
    result = CliRunner().invoke(
        build_app(), ["agents", "pin", "qwen", "0.99.1", "--prefix", str(tmp_path / "agents")]
    )
    assert result.exit_code == 1, result.output
    assert "ETARGET" in result.stderr
    assert f"qwen stays pinned to {get_pin('qwen').version}" in result.stderr
    assert copy.read_text() == before


def test_moving_the_packaged_pin_rewrites_the_parsed_copy_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import runpy

    copy = tmp_path / "pins.toml"
    copy.write_text(pins_path().read_text("utf-8"))
    monkeypatch.setattr("corral.agents._pin_edit.pins_path", lambda: copy)
    write_version("claude", "9.9.9")
    data = runpy.run_path(str(tmp_path / "_pins_data.py"))
    assert data["SOURCE"] == copy.read_text("utf-8")
    assert data["AGENTS"]["claude"]["version"] == "9.9.9"
    other = tmp_path / "elsewhere" / "pins.toml"
    other.parent.mkdir()
    other.write_text(copy.read_text("utf-8"))
    write_version("claude", "8.8.8", other)
    assert not (other.parent / "_pins_data.py").exists()
