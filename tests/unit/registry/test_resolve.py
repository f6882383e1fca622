"""Executable resolution: PATH, the pinned-agents cache after it, and a simulated Windows host."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from corral.registry import pinned_bin_dirs, resolve_executable_path


def _exe(path: Path, *, mode: int = 0o755) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(mode)
    return path


def test_bare_name_is_searched_across_path_in_order(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    _exe(second / "tool")
    _exe(first / "tool")
    found = resolve_executable_path(
        "tool", path=f"{first}{os.pathsep}{second}", platform="linux", extra_dirs=[]
    )
    assert found is not None
    assert (found.path, found.argv, found.source) == (
        str(first / "tool"),
        (str(first / "tool"),),
        "path",
    )


def test_non_executable_files_and_directories_are_skipped(tmp_path: Path) -> None:
    _exe(tmp_path / "a" / "tool", mode=0o644)
    (tmp_path / "b" / "tool").mkdir(parents=True)
    _exe(tmp_path / "c" / "tool")
    path = os.pathsep.join(str(tmp_path / d) for d in "abc")
    found = resolve_executable_path("tool", path=path, platform="linux", extra_dirs=[])
    assert found is not None
    assert found.path == str(tmp_path / "c" / "tool")


def test_missing_is_none(tmp_path: Path) -> None:
    assert (
        resolve_executable_path("nope", path=str(tmp_path), platform="linux", extra_dirs=[]) is None
    )


def test_explicit_path_is_checked_as_given(tmp_path: Path) -> None:
    tool = _exe(tmp_path / "bin" / "tool")
    found = resolve_executable_path(str(tool), path="", platform="linux")
    assert found is not None
    assert (found.path, found.source) == (str(tool), "explicit")
    assert (
        resolve_executable_path(str(tmp_path / "bin" / "other"), path="", platform="linux") is None
    )


def test_pinned_cache_is_searched_after_path_newest_version_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("CORRAL_CACHE_DIR", str(cache))
    _exe(cache / "agents" / "tool" / "1.9.0" / "node_modules" / ".bin" / "tool")
    _exe(cache / "agents" / "tool" / "1.10.0" / "node_modules" / ".bin" / "tool")
    _exe(cache / "agents" / "py" / "0.2.0" / "venv" / "bin" / "py")
    assert pinned_bin_dirs("tool") == [
        cache / "agents" / "tool" / "1.10.0" / "node_modules" / ".bin",
        cache / "agents" / "tool" / "1.9.0" / "node_modules" / ".bin",
    ]
    found = resolve_executable_path("tool", path="", platform="linux")
    assert found is not None
    assert found.source == "pinned"
    assert found.path == str(
        cache / "agents" / "tool" / "1.10.0" / "node_modules" / ".bin" / "tool"
    )
    venv = resolve_executable_path("py", path="", platform="linux")
    assert venv is not None
    assert venv.path.endswith("0.2.0/venv/bin/py")
    # PATH wins over the cache
    on_path = _exe(tmp_path / "bin" / "tool")
    found = resolve_executable_path("tool", path=str(on_path.parent), platform="linux")
    assert found is not None
    assert (found.path, found.source) == (str(on_path), "path")


# ── Windows, simulated through parameters ──


def _win_file(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")  # Windows has no executable bit: existence is what counts
    return path


def test_windows_pathext_expands_bare_names(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    _win_file(a / "claude")  # the POSIX shell shim npm also writes: not launchable on Windows
    _win_file(b / "claude.exe")
    found = resolve_executable_path(
        "claude", path=f"{a};{b}", pathext=".COM;.EXE;.BAT;.CMD", platform="windows", extra_dirs=[]
    )
    assert found is not None
    assert (found.path, found.argv) == (str(b / "claude.exe"), (str(b / "claude.exe"),))


def test_windows_cmd_shim_is_wrapped_in_cmd_exe(tmp_path: Path) -> None:
    shim = _win_file(tmp_path / "npm" / "codex.cmd")
    _win_file(tmp_path / "npm" / "codex.ps1")
    found = resolve_executable_path(
        "codex",
        path=str(shim.parent),
        pathext=".COM;.EXE;.BAT;.CMD",
        platform="windows",
        extra_dirs=[],
    )
    assert found is not None
    assert found.path == str(shim)
    assert found.argv == ("cmd.exe", "/d", "/s", "/c", str(shim))


def test_windows_bat_is_wrapped_and_pathext_order_wins(tmp_path: Path) -> None:
    d = tmp_path / "d"
    _win_file(d / "tool.bat")
    _win_file(d / "tool.cmd")
    found = resolve_executable_path(
        "tool", path=str(d), pathext=".BAT;.CMD", platform="windows", extra_dirs=[]
    )
    assert found is not None
    assert found.argv == ("cmd.exe", "/d", "/s", "/c", str(d / "tool.bat"))
    found = resolve_executable_path(
        "tool", path=str(d), pathext=".CMD;.BAT", platform="windows", extra_dirs=[]
    )
    assert found is not None
    assert found.path == str(d / "tool.cmd")


def test_windows_name_with_extension_is_not_expanded(tmp_path: Path) -> None:
    _win_file(tmp_path / "gemini.cmd")
    found = resolve_executable_path(
        "gemini.cmd", path=str(tmp_path), pathext=".EXE;.CMD", platform="windows", extra_dirs=[]
    )
    assert found is not None
    assert found.argv[-1] == str(tmp_path / "gemini.cmd")


def test_windows_default_pathext_and_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PATHEXT", raising=False)
    _win_file(tmp_path / "pi.cmd")
    found = resolve_executable_path("pi", path=str(tmp_path), platform="windows", extra_dirs=[])
    assert found is not None
    assert found.argv[0] == "cmd.exe"
    assert (
        resolve_executable_path("qwen", path=str(tmp_path), platform="windows", extra_dirs=[])
        is None
    )


def test_windows_path_uses_semicolons(tmp_path: Path) -> None:
    _win_file(tmp_path / "two" / "amp.exe")
    path = f"{tmp_path / 'one'};{tmp_path / 'two'}"
    found = resolve_executable_path(
        "amp", path=path, pathext=".EXE", platform="windows", extra_dirs=[]
    )
    assert found is not None
    assert found.path == str(tmp_path / "two" / "amp.exe")
