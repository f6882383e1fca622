"""The installer, driven with a stand-in ``npm`` on PATH (a Python script that lays out an npm
prefix dir the way npm does and records each call), so no registry is touched."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from corral import agents
from corral.agents import InstallEvent, Pin
from corral.agents._install import _version_matches, install_one
from corral.agents._layout import MARKER, find_binary, installed_version, locate_in
from corral.errors import InstallError

PIN = Pin(name="toy", registry="npm", package="@toy/cli", version="1.2.3", bins=("toy",))

FAKE_NPM = r"""#!{python}
import json, os, pathlib, sys
args = sys.argv[1:]
log = pathlib.Path(os.environ["FAKE_NPM_CALLS"])
log.write_text(log.read_text() + json.dumps(args) + "\n" if log.exists() else json.dumps(args) + "\n")
mode = os.environ.get("FAKE_NPM_MODE", "ok")
if mode == "fail":
    print("npm error code E404\nnpm error 404 Not Found - @toy/cli@1.2.3")
    sys.exit(1)
prefix = pathlib.Path(args[args.index("--prefix") + 1])
pkg, _, version = args[-1].rpartition("@")
pkg_dir = prefix / "node_modules" / pkg
pkg_dir.mkdir(parents=True, exist_ok=True)
(pkg_dir / "package.json").write_text(json.dumps({{"name": pkg, "version": version}}))
bin_dir = prefix / "node_modules" / ".bin"
bin_dir.mkdir(parents=True, exist_ok=True)
printed = version if mode != "wrong-version" else "9.9.9"
script = bin_dir / "toy"
script.write_text(f"#!/bin/sh\necho 'toy {{printed}}'\n")
script.chmod(0o755)
print(f"added 1 package in 0s")
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
    return calls


def _calls(path: Path) -> list[list[str]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_fresh_install_then_noop(tmp_path: Path, fake_npm: Path) -> None:
    root = tmp_path / "agents"
    events: list[InstallEvent] = []
    first = install_one(PIN, root, events.append)
    directory = root / "toy" / "1.2.3"
    assert (first.state, first.path) == ("done", str(directory / "node_modules/.bin/toy"))
    assert [e.state for e in events] == ["installing", "done"]
    assert _calls(fake_npm) == [
        ["install", "--no-fund", "--no-audit", "--prefix", str(directory), "@toy/cli@1.2.3"]
    ]
    marker = json.loads((directory / MARKER).read_text())
    assert (marker["version"], marker["version_output"]) == ("1.2.3", "toy 1.2.3")
    assert "added 1 package" in (directory / "install.log").read_text()

    second = install_one(PIN, root)
    assert second.state == "already-installed"
    assert len(_calls(fake_npm)) == 1


def test_crashed_install_without_marker_is_redone(tmp_path: Path, fake_npm: Path) -> None:
    directory = tmp_path / "toy" / "1.2.3"
    (directory / "node_modules").mkdir(parents=True)
    (directory / "leftover").write_text("half an install")
    result = install_one(PIN, tmp_path)
    assert result.state == "done"
    assert not (directory / "leftover").exists()
    assert len(_calls(fake_npm)) == 1


def test_hand_made_layout_is_adopted_without_npm(tmp_path: Path, fake_npm: Path) -> None:
    install_one(PIN, tmp_path)
    directory = tmp_path / "toy" / "1.2.3"
    (directory / MARKER).unlink()
    result = install_one(PIN, tmp_path)
    assert result.state == "already-installed"
    assert (directory / MARKER).exists()
    assert len(_calls(fake_npm)) == 1  # only the first, real install


def test_npm_failure_raises_with_log_tail(
    tmp_path: Path, fake_npm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_NPM_MODE", "fail")
    result = install_one(PIN, tmp_path)
    assert result.state == "failed"
    assert "404 Not Found" in result.log_tail
    assert not (tmp_path / "toy" / "1.2.3" / MARKER).exists()
    monkeypatch.setattr(agents._install, "get_pin", lambda name: PIN)
    with pytest.raises(InstallError) as info:
        agents.install(["toy"], prefix=tmp_path)
    assert info.value.agent == "toy"
    assert "404 Not Found" in info.value.log_tail


def test_wrong_version_output_fails_verification(
    tmp_path: Path, fake_npm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_NPM_MODE", "wrong-version")
    result = install_one(PIN, tmp_path)
    assert result.state == "failed"
    assert "without printing 1.2.3" in (result.error or "")
    assert "toy 9.9.9" in result.log_tail
    assert not (tmp_path / "toy" / "1.2.3" / MARKER).exists()


def test_prefix_env_var(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORRAL_AGENTS_DIR", str(tmp_path / "env-root"))
    assert agents.agents_root() == tmp_path / "env-root"
    assert agents.agents_root(tmp_path / "flag") == tmp_path / "flag"


def _write_exec(path: Path, head: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(head + b"\n")
    path.chmod(0o755)


def test_placeholder_bin_falls_back_to_platform_binary(tmp_path: Path) -> None:
    pin = Pin(
        name="toy",
        registry="npm",
        package="toy",
        version="1.0.0",
        bins=("toy",),
        fallback=("node_modules/toy-{platform}/bin/toy",),
    )
    directory = tmp_path / "toy" / "1.0.0"
    _write_exec(directory / "node_modules/toy/package.json", b'{"version": "1.0.0"}')
    _write_exec(directory / "node_modules/.bin/toy", b"placeholder: install scripts did not run")
    assert find_binary(pin, directory) is None
    real = directory / f"node_modules/toy-{agents.platform_tag()}/bin/toy"
    _write_exec(real, b"\x7fELF")
    assert find_binary(pin, directory) == real
    assert locate_in(pin, tmp_path) == real


def test_pypi_version_from_dist_info(tmp_path: Path) -> None:
    pin = Pin(name="h", registry="pypi", package="hermes-agent", version="0.19.0", bins=("hermes",))
    site = tmp_path / "venv/lib/python3.11/site-packages"
    (site / "hermes_agent-0.19.0.dist-info").mkdir(parents=True)
    (site / "other_pkg-1.0.dist-info").mkdir()
    assert installed_version(pin, tmp_path) == "0.19.0"
    _write_exec(tmp_path / "venv/bin/hermes", b"#!/usr/bin/env python3")
    assert find_binary(pin, tmp_path) == tmp_path / "venv/bin/hermes"


def test_locate_falls_back_to_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORRAL_AGENTS_DIR", str(tmp_path / "empty"))
    on_path = tmp_path / "pathbin" / "claude"
    _write_exec(on_path, b"#!/bin/sh")
    monkeypatch.setenv("PATH", str(on_path.parent))
    assert agents.locate("claude") == on_path
    row = next(r for r in agents.status(["claude"]) if r.name == "claude")
    assert (row.source, row.installed, row.verified) == ("path", None, False)
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert agents.locate("claude") is None
    assert agents.status(["claude"])[0].source == "missing"


@pytest.mark.parametrize(
    ("output", "ok"),
    [
        ("GitHub Copilot CLI 1.0.102.\nRun 'copilot update' to check for updates.", True),
        ("1.0.102", True),
        ("copilot 1.0.102 (linux)", True),
        ("1.0.1020", False),
        ("1.0.102.4", False),
        ("11.0.102", False),
    ],
)
def test_version_match_allows_a_full_stop_but_not_a_longer_version(output: str, ok: bool) -> None:
    assert _version_matches("1.0.102", output) is ok


@pytest.mark.parametrize(
    ("meta", "version"),
    [
        (b'{"name": "@toy/cli", "version": "1.2.3"}', "1.2.3"),
        (b'\xef\xbb\xbf{"version": "1.2.3"}', "1.2.3"),  # a UTF-8 BOM, which json.loads drops
        (b'["1.2.3"]', None),  # JSON, but not an object
        (b'{"version": 123}', None),
        (b"{not json", None),
        (b"\xff\xfe\x00", None),
    ],
)
def test_npm_version_from_package_json(tmp_path: Path, meta: bytes, version: str | None) -> None:
    package = tmp_path / "node_modules/@toy/cli"
    package.mkdir(parents=True)
    (package / "package.json").write_bytes(meta)
    assert installed_version(PIN, tmp_path) == version
