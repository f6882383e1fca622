"""End to end on a real CLI: qwen's newest release into the separate latest cache, then the suite
on it (and on the pin where they differ) and the drift report.

The look-up asks the npm registry through npm itself, as ``corral agents install`` does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from corral.agents import get_pin
from corral.agents._pin_edit import pins_path

pytestmark = [pytest.mark.realcli("qwen"), pytest.mark.timeout(900)]


def corral(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "corral", *args],
        capture_output=True,
        text=True,
        timeout=800,
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )


def test_latest_install_and_drift_report_for_qwen(tmp_path: Path, agent_bin) -> None:  # type: ignore[no-untyped-def]
    pinned_binary = agent_bin("qwen")
    pin = get_pin("qwen")
    pins_before = pins_path().read_bytes()
    latest_root = tmp_path / "latest"
    env = {
        **os.environ,
        "CORRAL_LATEST_DIR": str(latest_root),
        "CORRAL_HOME": str(tmp_path / "home"),
    }
    repo = Path(__file__).resolve().parents[2]

    installed = corral(["agents", "install", "--latest", "qwen", "--json"], env, repo)
    assert installed.returncode == 0, installed.stderr
    (row,) = json.loads(installed.stdout)
    assert row["name"] == "qwen" and row["pinned"] == pin.version
    newest = row["latest"]
    assert isinstance(newest, str) and newest[0].isdigit()
    if newest == pin.version:
        assert row["state"] == "same-as-pin"
    else:
        assert row["state"] in ("done", "already-installed")
        assert row["path"].startswith(str(latest_root / "qwen" / newest))
    assert json.loads((latest_root / "latest.json").read_text())["qwen"]["version"] == newest
    assert pins_path().read_bytes() == pins_before  # the pin did not move
    assert Path(pinned_binary).exists()

    report_md = tmp_path / "drift.md"
    ran = corral(
        [
            "conformance",
            "--latest",
            "qwen-acp",
            "-s",
            "text",
            "--json",
            "--write-report",
            str(report_md),
        ],
        env,
        repo,
    )
    report = json.loads(ran.stdout)
    (target,) = report["targets"]
    assert target["target"] == "qwen-acp" and target["ran"], ran.stderr
    assert (target["pinned"], target["latest"]) == (pin.version, newest)
    (text,) = target["scenarios"]
    assert text["pinned"] == "pass", text  # the pin conforms
    assert text["latest"] in ("pass", "fail")
    assert text["wire"] in ("same", "changed")  # the ACP transport was tapped on both sides
    assert ran.returncode == (1 if text["latest"] == "fail" else 0), ran.stderr
    page = report_md.read_text()
    assert f"| qwen | `{pin.package}` | {pin.version} | {newest} |" in page
    assert "| qwen-acp | qwen |" in page
