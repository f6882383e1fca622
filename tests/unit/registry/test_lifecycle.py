"""detect / probe / verify / repair and staleness, run against real executables.

The POSIX tools behind the two example manifests (``echo``, ``cat``) and ``false`` are the real
programs; two tiny scripts stand in only where a behaviour (hanging, failing ``--version``) is
needed. The real agent CLI case uses corral's pinned Claude Code.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from corral import agents
from corral.manifests import Manifest, parse_manifest
from corral.registry import (
    Registry,
    detect,
    detect_many,
    ensure_verified,
    is_stale,
    last_verify,
    probe,
    record_verify,
    repair_command,
    verify,
)
from corral.testing import require_agent

VERSION = re.compile(r"^\d+\.\d+")


def _manifest(executable: str, launch: str | None = None, **extra: Any) -> Manifest:
    data: dict[str, Any] = {
        "id": "t",
        "displayName": "T",
        "executables": [executable],
        "launchCommand": executable,
        "supportedPlatforms": ["linux"],
        "supportedApprovalPolicies": ["full"],
        "promptInjection": "stdin",
        **extra,
    }
    if launch is not None:
        data["supportsStructured"] = True
        data["streaming"] = {
            "preferred": {
                "launchCommand": launch,
                "promptDelivery": "json-rpc",
                "protocol": "plain-stdin",
                "sessionMode": "persistent-session",
                "supportsFollowUp": True,
            }
        }
    return parse_manifest(data)


def _script(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / "bin" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def _builtin(adapter_id: str) -> Manifest:
    return Registry(entry_points=lambda group: []).manifest(adapter_id)


# ── detect ──


async def test_detect_installed_reports_path_and_version() -> None:
    found = await detect(_builtin("example-plain-stdin"))
    assert found.status == "installed"
    assert found.path is not None
    assert Path(found.path).name == "cat"
    assert found.version is not None
    assert VERSION.match(found.version)
    assert found.error is None


async def test_detect_missing_reports_the_repair_command(tmp_path: Path) -> None:
    m = _manifest("corral-no-such-cli", install={"npm": "corral-no-such-cli"})
    found = await detect(m, path=str(tmp_path))
    assert (found.status, found.version, found.path) == ("missing", None, None)
    assert found.repair == ["npm", "install", "-g", "corral-no-such-cli"]


async def test_detect_times_out_on_a_hanging_version(tmp_path: Path) -> None:
    _script(tmp_path, "hangs", "exec sleep 30")
    found = await detect(_manifest("hangs"), path=str(tmp_path / "bin"), timeout=0.5)
    assert found.status == "installed"
    assert found.version is None
    assert found.error == "--version did not answer within 0.5s"


async def test_detect_reports_a_failing_version(tmp_path: Path) -> None:
    _script(tmp_path, "fails", "echo 'oops 9.9.9' >&2; exit 3")
    found = await detect(_manifest("fails"), path=str(tmp_path / "bin"))
    assert (found.status, found.version, found.error) == ("installed", None, "--version exited 3")


async def test_detect_many_keeps_order() -> None:
    ms = [
        _builtin("example-plain-argv"),
        _manifest("corral-no-such-cli"),
        _builtin("example-plain-stdin"),
    ]
    results = await detect_many(ms, path=os.environ.get("PATH", ""))
    assert [(r.adapter_id, r.status) for r in results] == [
        ("example-plain-argv", "installed"),
        ("t", "missing"),
        ("example-plain-stdin", "installed"),
    ]


async def test_detect_real_claude_through_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bin_dir = require_agent("claude", pinned_only=True).parent
    monkeypatch.setenv("CORRAL_CACHE_DIR", str(tmp_path / "empty-cache"))  # PATH alone must find it
    found = await detect(_builtin("claude-code"), path=str(bin_dir))
    assert (found.status, found.version, found.source) == (
        "installed",
        agents.get_pin("claude").version,
        "path",
    )


# ── probe ──


async def test_probe_ok_and_failing() -> None:
    ok = await probe(_builtin("example-plain-stdin"))
    assert ok.ok
    assert ok.exit_code == 0
    assert ok.argv[-1] == "--help"
    bad = await probe(_manifest("false"))
    assert not bad.ok
    assert bad.exit_code == 1
    assert bad.detail == "exited 1"


async def test_probe_missing(tmp_path: Path) -> None:
    result = await probe(_manifest("corral-no-such-cli"), path=str(tmp_path))
    assert not result.ok
    assert "corral-no-such-cli" in result.detail


# ── verify ──


async def test_verify_persistent_mode_must_stay_up() -> None:
    result = await verify(_builtin("example-plain-stdin"), settle=0.3)
    assert result.ok, result
    assert result.attempts == 1
    assert result.detail == "still running after 0.3s"
    assert Path(result.argv[0]).name == "cat"


async def test_verify_argv_mode_runs_help() -> None:
    result = await verify(_builtin("example-plain-argv"))
    assert result.ok, result
    assert result.argv[-1] == "--help"


async def test_verify_retries_once_before_failing() -> None:
    result = await verify(_manifest("false", launch="false"), settle=5.0)
    assert not result.ok
    assert result.attempts == 2
    assert result.exit_code == 1
    assert result.detail == "exited 1 within 5s of starting"


async def test_verify_without_profile_checks_the_shell_launch(tmp_path: Path) -> None:
    _script(tmp_path, "shellonly", 'test "$1" = --help')
    result = await verify(_manifest("shellonly"), path=str(tmp_path / "bin"))
    assert result.ok, result
    assert result.argv[-1] == "--help"


# ── staleness ──


async def test_profile_change_marks_the_adapter_stale(corral_home: Path) -> None:
    m = _builtin("example-plain-stdin")
    assert is_stale(m)
    result = await verify(m, settle=0.2)
    record_verify(m, result)
    assert not is_stale(m)
    record = last_verify(m.id)
    assert record is not None
    assert record.ok
    assert (corral_home / "state" / "adapters" / f"{m.id}.verify.json").exists()

    data = m.to_json()
    data["streaming"]["preferred"]["launchCommand"] = "cat -u"
    changed = parse_manifest(data)
    assert is_stale(changed)
    data["displayName"] = "Renamed, profile untouched"
    data["streaming"]["preferred"]["launchCommand"] = "cat"
    assert not is_stale(parse_manifest(data))


async def test_failed_verify_stays_stale() -> None:
    m = _manifest("false", launch="false")
    record_verify(m, await verify(m, settle=2.0, retries=0))
    assert is_stale(m)


# ── repair ──


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({"install": {"npm": "@openai/codex"}}, ["npm", "install", "-g", "@openai/codex"]),
        ({"install": {"pip": "hermes-agent[acp]"}}, ["pip", "install", "hermes-agent[acp]"]),
        ({"setupHint": "Install with pipx install aider-chat"}, ["pipx", "install", "aider-chat"]),
        ({"setupHint": "Download it from the vendor's site"}, None),
        ({}, None),
    ],
)
def test_repair_command(extra: dict[str, Any], expected: list[str] | None) -> None:
    assert repair_command(_manifest("x", **extra)) == expected


async def test_ensure_verified_reverifies_only_when_stale() -> None:
    m = _builtin("example-plain-stdin")
    first = await ensure_verified(m, settle=0.2)
    assert first.ok
    again = await ensure_verified(m, settle=0.2)
    assert again == first  # not stale: the record is reused, nothing is launched
    data = m.to_json()
    data["streaming"]["preferred"]["launchCommand"] = "cat -u"
    changed = await ensure_verified(parse_manifest(data), settle=0.2)
    assert changed.checked_at > first.checked_at
    assert changed.profile_hash != first.profile_hash


async def test_detection_and_launch_find_the_same_binary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stale ``claude`` earlier on PATH loses to the pinned install, for detect and launch alike."""
    from corral.adapters.base import find_binary
    from corral.adapters.claude import ClaudeAdapter

    pinned = require_agent("claude", pinned_only=True)
    decoy = tmp_path / "claude"
    decoy.write_text("#!/bin/sh\necho 0.0.1\n")
    decoy.chmod(0o755)
    path = f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"
    found = await detect(_builtin("claude-code"), path=path)
    assert (found.path, found.source) == (str(pinned), "pinned")
    assert found.version == agents.get_pin("claude").version
    monkeypatch.setenv("PATH", path)
    assert find_binary(None, "claude") == str(pinned)
    detected = await ClaudeAdapter.detect()
    assert detected is not None and detected.path == str(pinned)
