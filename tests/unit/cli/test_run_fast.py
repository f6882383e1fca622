"""The lean ``corral run`` entry (``corral.cli._run_fast``): its table is the Typer command's, it
parses what Typer would, and it hands everything unusual back to Typer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

from corral.cli._lazy import COMMANDS, load_command
from corral.cli._plain_args import parse, table
from corral.cli._run_fast import OPTIONS

_TABLE = table(OPTIONS)
KIND_OF_TYPE: dict[object, str] = {
    str: "str",
    int: "int",
    float: "float",
    Path: "path",
    list[str]: "strs",
    list[Path]: "paths",
}


def _run_command() -> Any:
    spec = next(s for s in COMMANDS if s.name == "run")
    return load_command(spec)


def test_the_table_is_what_the_typer_command_declares() -> None:
    command = _run_command()
    declared = {}
    for p in command.params:
        if not isinstance(p, typer.core.TyperOption):
            continue
        annotation = p.type_descriptor.annotation
        kind = "flag" if p.is_flag else KIND_OF_TYPE.get(annotation, repr(annotation))
        declared[str(p.name)] = (kind, tuple(p.opts), tuple(p.secondary_opts))
    assert {name: (kind, on, off) for name, kind, on, off in OPTIONS} == declared
    arguments = [str(p.name) for p in command.params if isinstance(p, typer.core.TyperArgument)]
    assert arguments == ["agent", "prompt"]


def test_the_typer_defaults_are_run_commands_defaults() -> None:
    import inspect

    from corral.cli._run_main import run_command

    defaults = {
        name: p.default
        for name, p in inspect.signature(run_command).parameters.items()
        if p.default is not inspect.Parameter.empty
    }
    for p in _run_command().params:
        if isinstance(p, typer.core.TyperOption):
            # a repeatable option's default is an empty list in Typer, ``None`` (no list) here
            assert p.default == defaults[str(p.name)] or (p.default == [] and p.multiple), p.name


@pytest.mark.parametrize(
    "args",
    [
        ["claude-code", "hi", "--help"],
        ["claude-code", "hi", "-h"],
        ["claude-code", "hi", "--bogus"],
        ["claude-code", "hi", "-ym", "x"],  # clustered short options: Typer's
        ["claude-code", "hi", "-m=x"],
        ["claude-code", "hi", "--model"],  # a missing value
        ["claude-code", "hi", "--idle-timeout", "soon"],
        ["claude-code", "hi", "--json=yes"],
        ["claude-code"],
        [],
        ["claude-code", "hi", "extra"],
        ["claude-code", "--", "-p"],
    ],
)
def test_anything_unusual_goes_to_typer(args: list[str]) -> None:
    assert parse(args, _TABLE, (2, 2)) is None


@pytest.mark.parametrize(
    "args",
    [
        ["claude-code", "hi"],
        ["claude-code", "Say hello.", "--json", "--binary", "/x/claude", "--model", "m"],
        ["codex", "hi", "--cwd", "/tmp", "--agent-arg=--a", "--agent-arg", "b", "-y"],
        ["--json", "pi", "hi", "--idle-timeout", "0", "--intent", "ask", "-m", "a", "-m", "b"],
        ["gemini", "hi", "--image", "a.png", "--image=b.png", "--resume", "s1", "--effort", "hi"],
        ["claude-code", "-", "--allowed-commands", "ls", "--vendor-permission-mode", "plan"],
    ],
)
def test_the_lean_parse_is_typers_parse(args: list[str]) -> None:
    command = _run_command()
    ctx = command.context_class(command, info_name="run")
    rest = typer.core.TyperCommand.parse_args(command, ctx, list(args))  # Typer's own parser
    assert rest == []
    parsed = parse(list(args), _TABLE, (2, 2))
    assert parsed is not None
    params, (agent, prompt) = parsed
    defaults = {str(p.name): p.default for p in command.params}
    assert defaults | params | {"agent": agent, "prompt": prompt} == {
        k: list(v) if isinstance(v, tuple) else v for k, v in ctx.params.items()
    }


def _corral(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {"CORRAL_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "corral", "run", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _imported(stderr: str) -> list[str]:
    return [
        line.rsplit("|", 1)[1].strip()
        for line in stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    ]


def test_a_plain_run_loads_no_typer_nor_pydantic(tmp_path: Path) -> None:
    done = _corral(["nosuch-agent", "hi", "--json"], tmp_path)
    assert done.returncode == 4, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if not line.startswith("import time:")]
    assert lines[-1].startswith("error: ") and "nosuch-agent" in lines[-1]
    modules = _imported(done.stderr)
    assert "corral.cli._run_fast" in modules and "corral.cli._run_main" in modules
    assert [m for m in modules if m.split(".")[0] in ("typer", "click", "pydantic")] == []


def test_usage_errors_and_help_still_come_from_typer(tmp_path: Path) -> None:
    done = _corral(["claude-code", "hi", "--bogus"], tmp_path)
    assert done.returncode == 2
    assert "No such option: --bogus" in done.stderr
    done = _corral(["--help"], tmp_path)
    assert done.returncode == 0 and "--idle-timeout" in done.stdout
