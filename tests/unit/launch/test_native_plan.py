"""A plan and a codex driver run the native executable behind codex's npm wrapper (decision 038)
— and only when :func:`corral.agents._native.native_entry` finds one."""

from __future__ import annotations

import asyncio
import zlib
from pathlib import Path

import pytest

from corral.adapters.codex import CodexAdapter, CodexExecAdapter
from corral.agents import _native
from corral.agents._native import Native
from corral.launch import LaunchOptions, build_plan

WRAPPER = b"#!/usr/bin/env node\n// a placeholder for bin/codex.js\n"


@pytest.fixture
def codex_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """An npm prefix with a (reviewed, placeholder) wrapper and the native executable of this
    machine's platform package: (.bin/codex, native)."""
    monkeypatch.setitem(_native.REVIEWED, (len(WRAPPER), zlib.crc32(WRAPPER)), "test")
    monkeypatch.setattr(_native, "_machine", lambda: "x86_64")
    monkeypatch.setattr(_native.sys, "platform", "linux")
    modules = tmp_path / "node_modules"
    script = modules / "@openai" / "codex" / "bin" / "codex.js"
    script.parent.mkdir(parents=True)
    script.write_bytes(WRAPPER)
    package = modules / "@openai" / "codex-linux-x64"
    package.mkdir(parents=True)
    (package / "package.json").write_text("{}")
    native = package / "vendor" / "x86_64-unknown-linux-musl" / "bin" / "codex"
    native.parent.mkdir(parents=True)
    native.write_bytes(b"\x7fELF")
    native.chmod(0o755)
    (modules / ".bin").mkdir()
    (modules / ".bin" / "codex").symlink_to("../@openai/codex/bin/codex.js")
    return modules / ".bin" / "codex", native


def _plan(binary: Path, native: bool = True):  # type: ignore[no-untyped-def]
    return build_plan(
        LaunchOptions(
            "codex",
            "custom",
            transport="openai-responses",
            api_base="http://h/v1",
            model="m",
            prompt="hi",
        ),
        {"CODEX_MANAGED_BY_PNPM": "1"},
        locate=lambda agent: str(binary),
        launch_home=Path("/tmp/h"),
        native=_native.native_entry if native else None,
    )


def test_a_plan_runs_the_native_executable(codex_tree: tuple[Path, Path]) -> None:
    binary, native = codex_tree
    plan = _plan(binary)
    wrapped = _plan(binary, native=False)
    assert wrapped.harness.command == str(binary)
    assert plan.harness.command == str(native)
    assert plan.harness.args == wrapped.harness.args
    root = str(binary.resolve().parent.parent)
    assert plan.harness.env == wrapped.harness.env | {
        "CODEX_MANAGED_PACKAGE_ROOT": root,
        "CODEX_MANAGED_BY_NPM": "1",
    }
    assert set(plan.harness.unset) == set(wrapped.harness.unset) | {
        "CODEX_MANAGED_BY_BUN",
        "CODEX_MANAGED_BY_PNPM",
        "CODEX_MANAGED_BY_VITE_PLUS",
    }
    assert plan.to_json()["command"] == str(native)  # --dry-run shows what really runs


def test_a_plan_keeps_a_binary_that_is_no_wrapper(tmp_path: Path) -> None:
    other = tmp_path / "codex"
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    plan = _plan(other)
    assert plan.harness.command == str(other)
    assert not any(k.startswith("CODEX_MANAGED") for k in plan.harness.env)


class _Spawned(Exception):
    pass


@pytest.mark.parametrize("cls", [CodexAdapter, CodexExecAdapter])
def test_both_codex_drivers_spawn_the_native_executable(
    codex_tree: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cls: type
) -> None:
    binary, native = codex_tree
    monkeypatch.setenv("CODEX_MANAGED_BY_BUN", "1")
    spawned: list[tuple[list[str], dict[str, str]]] = []

    def factory(argv: list[str], *, env: dict[str, str], **_: object) -> object:
        spawned.append((argv, env))
        raise _Spawned

    adapter = cls(binary=str(binary), cwd=str(tmp_path), env={"A": "1"})
    adapter.transport_factory = factory

    first = adapter.start("s1") if cls is CodexAdapter else adapter.send("hi")
    with pytest.raises(_Spawned):
        asyncio.run(first)
    ((argv, env),) = spawned
    assert argv[0] == str(native)
    assert argv[1] == ("app-server" if cls is CodexAdapter else "exec")
    assert env["A"] == "1" and env["CODEX_MANAGED_BY_NPM"] == "1"
    assert env["CODEX_MANAGED_PACKAGE_ROOT"] == str(binary.resolve().parent.parent)
    assert "CODEX_MANAGED_BY_BUN" not in env


def test_native_is_a_value() -> None:
    assert Native("a", {"X": "1"}, ("Y",)) == Native("a", {"X": "1"}, ("Y",))
    assert Native("a", {}, ()) != Native("b", {}, ())
    assert "command='a'" in repr(Native("a", {}, ()))
