"""``terminal/*`` served by corral: corral-managed processes, cwd confined to the project root,
output capped at ``outputByteLimit`` (oldest bytes dropped, ``truncated`` reported)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from corral.adapters._acp_fs import OutsideRoot, ProjectFiles
from corral.adapters._acp_terminal import Terminals
from corral.errors import JsonRpcError


@pytest.fixture
def terminals(tmp_path: Path) -> Terminals:
    root = tmp_path / "project"
    root.mkdir()
    return Terminals(ProjectFiles(root), {"PATH": "/usr/bin:/bin"})


async def test_runs_in_root_and_reports_exit(terminals: Terminals) -> None:
    created = await terminals.create(
        {"command": "/bin/sh", "args": ["-c", "pwd; echo err >&2; exit 3"]}
    )
    tid = created["terminalId"]
    status = await terminals.wait_for_exit({"terminalId": tid})
    assert status == {"exitCode": 3, "signal": None}
    out = await terminals.output({"terminalId": tid})
    assert out["output"] == f"{terminals.files.root}\nerr\n"
    assert out["truncated"] is False
    assert out["exitStatus"] == {"exitCode": 3, "signal": None}
    await terminals.release({"terminalId": tid})
    with pytest.raises(JsonRpcError):
        await terminals.output({"terminalId": tid})


async def test_output_limit_keeps_the_tail(terminals: Terminals) -> None:
    created = await terminals.create(
        {
            "command": sys.executable,
            "args": ["-c", "print('a' * 5000 + 'END', end='')"],
            "outputByteLimit": 100,
        }
    )
    await terminals.wait_for_exit(created)
    out = await terminals.output(created)
    assert out["truncated"] is True
    assert len(out["output"].encode()) <= 100
    assert out["output"].endswith("END")


async def test_cut_never_splits_a_character(terminals: Terminals) -> None:
    created = await terminals.create(
        {
            "command": sys.executable,
            "args": ["-c", "print('é' * 100, end='')"],
            "outputByteLimit": 11,
        }
    )
    await terminals.wait_for_exit(created)
    out = await terminals.output(created)
    assert out["output"] == "é" * 5 and out["truncated"] is True


@pytest.mark.parametrize("cwd", ["{root}/..", "/", "{root}/link"])
async def test_cwd_outside_root_refused(terminals: Terminals, tmp_path: Path, cwd: str) -> None:
    root = terminals.files.root
    (root / "link").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(OutsideRoot):
        await terminals.create({"command": "/bin/true", "cwd": cwd.format(root=root)})


async def test_kill_ends_a_running_command(terminals: Terminals) -> None:
    created = await terminals.create({"command": "/bin/sleep", "args": ["30"]})
    out = await terminals.output(created)
    assert "exitStatus" not in out
    await terminals.kill(created)
    status = await terminals.wait_for_exit(created)
    assert status["signal"] == "SIGTERM"
    await terminals.close()


async def test_env_and_bad_requests(terminals: Terminals) -> None:
    created = await terminals.create(
        {"command": "/bin/sh", "args": ["-c", "echo $X"], "env": [{"name": "X", "value": "42"}]}
    )
    await terminals.wait_for_exit(created)
    assert (await terminals.output(created))["output"] == "42\n"
    with pytest.raises(JsonRpcError):
        await terminals.create({"command": ""})
    with pytest.raises(JsonRpcError):
        await terminals.create({"command": "/nonexistent/binary"})
