"""The newest-release look-up and the separate latest cache, with stand-in registry clients."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from corral.agents import get_pin
from corral.agents._latest import (
    install_latest,
    latest_root,
    latest_version,
    locate_latest,
    lookup_latest,
    parse_npm_version,
    parse_pip_index,
    read_index,
)
from corral.errors import InstallError

# Lays out an npm prefix dir for `npm install --prefix DIR PKG@VERSION`, its bin printing VERSION.
FAKE_NPM = r"""#!{python}
import json, os, pathlib, sys
args = sys.argv[1:]
calls = pathlib.Path(os.environ["FAKE_NPM_CALLS"])
with calls.open("a") as fh:
    fh.write(json.dumps(args) + "\n")
prefix = pathlib.Path(args[args.index("--prefix") + 1])
pkg, _, version = args[-1].rpartition("@")
pkg_dir = prefix / "node_modules" / pkg
pkg_dir.mkdir(parents=True, exist_ok=True)
(pkg_dir / "package.json").write_text(json.dumps({{"name": pkg, "version": version}}))
bin_dir = prefix / "node_modules" / ".bin"
bin_dir.mkdir(parents=True, exist_ok=True)
script = bin_dir / os.environ["FAKE_NPM_BIN"]
script.write_text(f"#!/bin/sh\necho '{{version}}'\n")
script.chmod(0o755)
"""


@pytest.fixture
def fake_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text(FAKE_NPM.format(python=sys.executable))
    npm.chmod(npm.stat().st_mode | stat.S_IEXEC)
    calls = tmp_path / "npm-calls.jsonl"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_NPM_CALLS", str(calls))
    monkeypatch.setenv("FAKE_NPM_BIN", "codex")
    return calls


def answering(**versions: str) -> object:
    """A registry runner: ``npm view PKG version --json`` answers ``versions[agent]``."""
    by_package = {get_pin(name).package: v for name, v in versions.items()}
    asked: list[list[str]] = []

    def run(argv: Sequence[str]) -> tuple[int, str]:
        asked.append(list(argv))
        package = argv[2]
        if package not in by_package:
            return 1, "npm error code E404\nnpm error 404 Not Found"
        return 0, json.dumps(by_package[package])

    run.asked = asked  # type: ignore[attr-defined]
    return run


def test_npm_view_output_is_a_json_string_or_a_list_of_them() -> None:
    assert parse_npm_version('"2.1.332"\n') == "2.1.332"
    assert parse_npm_version('["1.0.0", "1.0.1"]') == "1.0.1"
    assert parse_npm_version('"1.0.0-beta.3"') == "1.0.0-beta.3"
    with pytest.raises(ValueError, match="E404"):
        parse_npm_version('{"error": {"code": "E404", "summary": "E404 Not Found"}}')
    for bad in ("", "npm WARN something", '"; rm -rf /"', "{}", "42"):
        with pytest.raises(ValueError):
            parse_npm_version(bad)


PIP_OUTPUT = """WARNING: pip index is currently an experimental command.
hermes-agent (0.19.0)
Available versions: 0.19.0, 0.18.2, 0.18.1
"""


def test_pip_index_output_names_the_newest_version() -> None:
    assert parse_pip_index(PIP_OUTPUT, "hermes-agent") == "0.19.0"
    assert parse_pip_index("Aider_Chat (0.86.2)\n", "aider-chat") == "0.86.2"
    with pytest.raises(ValueError, match="no version of other"):
        parse_pip_index(PIP_OUTPUT, "other")
    with pytest.raises(ValueError):
        parse_pip_index("ERROR: No matching distribution found for hermes-agent\n", "hermes-agent")


def test_lookup_asks_the_registry_client_of_the_pin() -> None:
    run = answering(codex="0.200.0")
    assert lookup_latest(get_pin("codex"), run) == "0.200.0"  # type: ignore[arg-type]
    assert run.asked[0][1:] == ["view", "@openai/codex", "version", "--json"]  # type: ignore[attr-defined]
    with pytest.raises(InstallError, match="exited 1"):
        lookup_latest(get_pin("claude"), run)  # type: ignore[arg-type]
    seen: list[list[str]] = []

    def pip(argv: Sequence[str]) -> tuple[int, str]:
        seen.append(list(argv))
        return 0, PIP_OUTPUT

    assert lookup_latest(get_pin("hermes"), pip) == "0.19.0"
    assert seen[0][:6] == [sys.executable, "-m", "pip", "index", "versions", "hermes-agent"]


def test_latest_installs_into_its_own_root_and_never_touches_the_pins(
    tmp_path: Path, fake_npm: Path
) -> None:
    latest, pinned = tmp_path / "latest", tmp_path / "agents"
    before = get_pin("codex")
    events: list[str] = []
    results = install_latest(
        ["codex", "claude"],
        prefix=latest,
        pinned_prefix=pinned,
        progress=lambda e: events.append(f"{e.name} {e.state}"),
        run=answering(codex="9.8.7"),  # type: ignore[arg-type]
    )
    by_name = {r.name: r for r in results}
    assert by_name["codex"].state == "done"
    assert by_name["codex"].latest == "9.8.7"
    assert by_name["codex"].pinned == before.version
    assert by_name["codex"].path == str(latest / "codex/9.8.7/node_modules/.bin/codex")
    # one agent failing (its look-up) does not stop the other, and says why
    assert by_name["claude"].state == "failed"
    assert by_name["claude"].latest is None
    assert "exited 1" in (by_name["claude"].error or "")
    assert "codex done" in events and "claude failed" in events
    assert not pinned.exists()  # the pinned root is never written
    assert get_pin("codex") == before  # nor pins.toml
    assert latest_version("codex", latest) == "9.8.7"
    assert locate_latest("codex", latest, pinned) == latest / "codex/9.8.7/node_modules/.bin/codex"
    assert locate_latest("claude", latest, pinned) is None
    assert read_index(latest)["claude"].error == by_name["claude"].error
    # a second run finds it installed (npm is not called again)
    calls = fake_npm.read_text().splitlines()
    again = install_latest(
        ["codex"], prefix=latest, pinned_prefix=pinned, run=answering(codex="9.8.7")
    )  # type: ignore[arg-type]
    assert again[0].state == "already-installed"
    assert fake_npm.read_text().splitlines() == calls


def test_a_newest_release_that_is_the_pin_reuses_the_pinned_install(
    tmp_path: Path, fake_npm: Path
) -> None:
    from corral.agents import install

    pinned, latest = tmp_path / "agents", tmp_path / "latest"
    version = get_pin("codex").version
    install(["codex"], prefix=pinned)
    npm_calls = len(fake_npm.read_text().splitlines())
    (result,) = install_latest(
        ["codex"],
        prefix=latest,
        pinned_prefix=pinned,
        run=answering(codex=version),  # type: ignore[arg-type]
    )
    assert result.state == "same-as-pin"
    assert result.path == str(pinned / f"codex/{version}/node_modules/.bin/codex")
    assert len(fake_npm.read_text().splitlines()) == npm_calls  # no second copy
    assert not (latest / "codex").exists()
    assert locate_latest("codex", latest, pinned) == Path(result.path)


def test_the_latest_root_is_separate_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CORRAL_LATEST_DIR", raising=False)
    monkeypatch.setenv("CORRAL_CACHE_DIR", str(tmp_path))
    assert latest_root() == tmp_path / "latest"
    monkeypatch.setenv("CORRAL_LATEST_DIR", str(tmp_path / "x"))
    assert latest_root() == tmp_path / "x"
    assert latest_root(tmp_path / "y") == tmp_path / "y"


def test_an_unreadable_index_is_no_index(tmp_path: Path) -> None:
    (tmp_path / "latest.json").write_text("{not json")
    assert read_index(tmp_path) == {}
    assert latest_version("codex", tmp_path) is None


def test_install_latest_cli_reports_json_and_fails_when_one_agent_fails(
    tmp_path: Path, fake_npm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from corral.cli import build_app

    monkeypatch.setattr("corral.agents._latest._run", answering(codex="9.8.7"))
    monkeypatch.setenv("CORRAL_AGENTS_DIR", str(tmp_path / "agents"))
    latest = tmp_path / "latest"
    result = CliRunner().invoke(
        build_app(),
        ["agents", "install", "--latest", "codex", "claude", "--prefix", str(latest), "--json"],
    )
    assert result.exit_code == 1, (result.output, result.exception)
    rows = {r["name"]: r for r in json.loads(result.stdout)}
    assert (rows["codex"]["state"], rows["codex"]["latest"]) == ("done", "9.8.7")
    assert rows["claude"]["state"] == "failed"
    assert "claude" in result.stderr and "exited 1" in result.stderr
    assert "codex 9.8.7: installing" in result.stderr  # progress goes to stderr with --json
    assert (latest / "codex/9.8.7/.corral-installed.json").is_file()
    assert not (tmp_path / "agents").exists()
