"""``native_entry``: codex's npm wrapper replaced by the native executable it runs (decision 038).

Fake install trees (no process is started): the wrapper here is a placeholder text, reviewed by
passing its own size and CRC-32, so every rule of the look-up is checked apart from the real
wrapper (``tests/realcli/test_codex_native.py`` checks the real one against Node running it).
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path

import pytest

from corral.agents._native import REVIEWED, Native, native_entry

WRAPPER = b"#!/usr/bin/env node\n// a placeholder for bin/codex.js\n"
KNOWN = {(len(WRAPPER), zlib.crc32(WRAPPER)): "test"}
LINUX_X64 = ("@openai/codex-linux-x64", "x86_64-unknown-linux-musl")
MANAGED = (
    "CODEX_MANAGED_BY_NPM",
    "CODEX_MANAGED_BY_BUN",
    "CODEX_MANAGED_BY_PNPM",
    "CODEX_MANAGED_BY_VITE_PLUS",
)


def _executable(path: Path, mode: int = 0o755) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x7fELF")
    path.chmod(mode)
    return path


def install(
    prefix: Path,
    *,
    platform: tuple[str, str] = LINUX_X64,
    nested: bool = False,
    wrapper: bytes = WRAPPER,
    native: bool = True,
) -> tuple[Path, Path, Path]:
    """An npm prefix with @openai/codex and its platform package: (.bin/codex, package root,
    the native executable)."""
    modules = prefix / "node_modules"
    root = modules / "@openai" / "codex"
    script = root / "bin" / "codex.js"
    script.parent.mkdir(parents=True)
    script.write_bytes(wrapper)
    script.chmod(0o755)
    (modules / ".bin").mkdir()
    (modules / ".bin" / "codex").symlink_to("../@openai/codex/bin/codex.js")
    package, triple = platform
    where = (root / "node_modules" if nested else modules) / package
    where.mkdir(parents=True)
    (where / "package.json").write_text("{}")
    exe = where / "vendor" / triple / "bin" / "codex"
    if native:
        _executable(exe)
    return modules / ".bin" / "codex", root, exe


def expected(exe: Path, root: Path, manager: str = "NPM") -> Native:
    chosen = f"CODEX_MANAGED_BY_{manager}"
    return Native(
        str(exe),
        {"CODEX_MANAGED_PACKAGE_ROOT": str(root), chosen: "1"},
        tuple(n for n in MANAGED if n != chosen),
    )


def test_an_npm_install_runs_its_native_executable(tmp_path: Path) -> None:
    binary, root, exe = install(tmp_path)
    found = native_entry(binary, {}, reviewed=KNOWN, system="linux", machine="x86_64")
    assert found == expected(exe, root)


@pytest.mark.parametrize(
    ("system", "machine", "platform"),
    [
        ("linux", "x86_64", LINUX_X64),
        ("linux", "AMD64", LINUX_X64),
        ("linux", "aarch64", ("@openai/codex-linux-arm64", "aarch64-unknown-linux-musl")),
        ("android", "aarch64", ("@openai/codex-linux-arm64", "aarch64-unknown-linux-musl")),
        ("darwin", "arm64", ("@openai/codex-darwin-arm64", "aarch64-apple-darwin")),
        ("darwin", "x86_64", ("@openai/codex-darwin-x64", "x86_64-apple-darwin")),
    ],
)
def test_the_platform_package_of_each_target(
    tmp_path: Path, system: str, machine: str, platform: tuple[str, str]
) -> None:
    binary, root, exe = install(tmp_path, platform=platform)
    found = native_entry(binary, {}, reviewed=KNOWN, system=system, machine=machine)
    assert found == expected(exe, root)


@pytest.mark.parametrize(
    ("system", "machine"), [("win32", "AMD64"), ("linux", "riscv64"), ("freebsd", "x86_64")]
)
def test_a_platform_the_wrapper_does_not_know_keeps_the_wrapper(
    tmp_path: Path, system: str, machine: str
) -> None:
    binary, _, _ = install(tmp_path)
    assert native_entry(binary, {}, reviewed=KNOWN, system=system, machine=machine) is None


def test_a_nested_platform_package_is_found_first(tmp_path: Path) -> None:
    binary, root, exe = install(tmp_path, nested=True)
    _executable(
        tmp_path / "node_modules" / LINUX_X64[0] / "vendor" / LINUX_X64[1] / "bin" / "codex"
    )
    (tmp_path / "node_modules" / LINUX_X64[0] / "package.json").write_text("{}")
    found = native_entry(binary, {}, reviewed=KNOWN, system="linux", machine="x86_64")
    assert found == expected(exe, root)
    assert "/codex/node_modules/" in found.command


def test_a_platform_package_further_up_is_found_as_node_finds_it(tmp_path: Path) -> None:
    binary, root, _ = install(tmp_path / "inner")
    package = tmp_path / "inner" / "node_modules" / LINUX_X64[0]
    for entry in sorted(package.rglob("*"), reverse=True):
        entry.rmdir() if entry.is_dir() else entry.unlink()
    package.rmdir()
    (tmp_path / "node_modules" / LINUX_X64[0]).mkdir(parents=True)
    (tmp_path / "node_modules" / LINUX_X64[0] / "package.json").write_text("{}")
    exe = _executable(
        tmp_path / "node_modules" / LINUX_X64[0] / "vendor" / LINUX_X64[1] / "bin" / "codex"
    )
    found = native_entry(binary, {}, reviewed=KNOWN, system="linux", machine="x86_64")
    assert found == expected(exe, root)


def test_an_unreviewed_wrapper_keeps_the_wrapper(tmp_path: Path) -> None:
    changed = WRAPPER.replace(b"placeholder", b"Placeholder")  # same size, other bytes
    binary, _, _ = install(tmp_path, wrapper=changed)
    assert native_entry(binary, {}, reviewed=KNOWN, system="linux", machine="x86_64") is None
    assert native_entry(binary, {}, system="linux", machine="x86_64") is None  # not in REVIEWED


@pytest.mark.parametrize("problem", ["missing", "not executable", "no platform package"])
def test_a_missing_native_executable_keeps_the_wrapper(tmp_path: Path, problem: str) -> None:
    binary, _, exe = install(tmp_path, native=problem != "missing")
    if problem == "not executable":
        exe.chmod(0o644)
    if problem == "no platform package":
        (exe.parents[3] / "package.json").unlink()
    assert native_entry(binary, {}, reviewed=KNOWN, system="linux", machine="x86_64") is None


def test_other_binaries_are_not_wrappers(tmp_path: Path) -> None:
    elf = _executable(tmp_path / "node_modules" / ".bin" / "claude")
    assert native_entry(elf, {}, reviewed=KNOWN, system="linux", machine="x86_64") is None
    assert native_entry("codex", {}, reviewed=KNOWN, system="linux", machine="x86_64") is None
    assert native_entry(tmp_path / "nothing" / "codex.js", {}, reviewed=KNOWN) is None


@pytest.mark.parametrize(
    ("env", "manager"),
    [
        ({}, "NPM"),
        ({"npm_config_user_agent": "npm/10.8.2 node/v20.20.2 linux x64"}, "NPM"),
        ({"npm_config_user_agent": "bun/1.1.0 npm/? node/v22 linux x64"}, "BUN"),
        ({"npm_config_user_agent": "x bun/1.1.0"}, "BUN"),
        ({"npm_config_user_agent": "xbun/1.1.0"}, "NPM"),  # not at a word boundary
        ({"npm_execpath": "/home/u/.bun/bin/bun"}, "BUN"),
    ],
)
def test_the_package_manager_variable(tmp_path: Path, env: dict[str, str], manager: str) -> None:
    binary, root, exe = install(tmp_path)
    found = native_entry(binary, env, reviewed=KNOWN, system="linux", machine="x86_64")
    assert found == expected(exe, root, manager)


def test_a_bun_global_install_is_bun(tmp_path: Path) -> None:
    binary, root, exe = install(tmp_path / ".bun" / "install" / "global")
    found = native_entry(binary, {}, reviewed=KNOWN, system="linux", machine="x86_64")
    assert found == expected(exe, root, "BUN")


def test_a_pnpm_install_is_pnpm(tmp_path: Path) -> None:
    binary, root, exe = install(tmp_path)
    (tmp_path / "node_modules" / ".modules.yaml").write_text("")
    found = native_entry(binary, {}, reviewed=KNOWN, system="linux", machine="x86_64")
    assert found == expected(exe, root, "PNPM")


def test_a_pnpm_marker_that_owns_another_codex_is_not_pnpm(tmp_path: Path) -> None:
    binary, root, exe = install(tmp_path / "a")
    (tmp_path / "node_modules" / "@openai" / "codex").mkdir(parents=True)  # not this package
    (tmp_path / "node_modules" / ".modules.yaml").write_text("")
    found = native_entry(binary, {}, reviewed=KNOWN, system="linux", machine="x86_64")
    assert found == expected(exe, root, "NPM")


def test_a_vite_plus_install_keeps_the_wrapper(tmp_path: Path) -> None:
    binary, _, _ = install(tmp_path / "packages" / "@openai" / "codex" / "id1")
    (tmp_path / "packages" / "@openai" / "codex.json").write_text('{"name": "@openai/codex"}')
    assert native_entry(binary, {}, reviewed=KNOWN, system="linux", machine="x86_64") is None


def test_the_environment_the_native_executable_gets(tmp_path: Path) -> None:
    binary, root, _ = install(tmp_path)
    found = native_entry(binary, {}, reviewed=KNOWN, system="linux", machine="x86_64")
    assert found is not None
    base = {
        "PATH": "/bin",
        "CODEX_MANAGED_BY_BUN": "1",
        "CODEX_MANAGED_BY_PNPM": "1",
        "CODEX_MANAGED_PACKAGE_ROOT": "/elsewhere",
    }
    assert found.environment(base) == {
        "PATH": "/bin",
        "CODEX_MANAGED_PACKAGE_ROOT": str(root),
        "CODEX_MANAGED_BY_NPM": "1",
    }


def test_the_package_root_is_the_real_path(tmp_path: Path) -> None:
    _, root, exe = install(tmp_path / "real")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    linked = tmp_path / "link" / "node_modules" / ".bin" / "codex"
    found = native_entry(linked, {}, reviewed=KNOWN, system="linux", machine="x86_64")
    assert found == expected(exe, root)
    assert os.path.realpath(found.command) == found.command


def test_every_reviewed_wrapper_names_a_release() -> None:
    assert REVIEWED and all(
        isinstance(size, int) and size > 0 and 0 <= crc < 2**32 and release[0].isdigit()
        for (size, crc), release in REVIEWED.items()
    )
