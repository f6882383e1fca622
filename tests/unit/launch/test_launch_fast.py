"""The lean ``corral launch`` entry (``corral.cli._launch_fast``): its table is the Typer
command's, it parses what Typer would, and it hands everything unusual back to Typer."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

from corral.cli._launch_fast import OPTIONS, parse, split_harness_args
from corral.cli._lazy import COMMANDS, load_command
from corral.launch import LaunchOptions

KIND_OF_TYPE: dict[object, str] = {str: "str", int: "int", float: "float", Path: "path"}


def _launch_command() -> Any:
    spec = next(s for s in COMMANDS if s.name == "launch")
    return load_command(spec)


def test_the_table_is_what_the_typer_command_declares() -> None:
    command = _launch_command()
    options = [p for p in command.params if isinstance(p, typer.core.TyperOption)]
    declared = {}
    for p in options:
        if p.is_flag:
            kind = "flag"
        else:
            annotation = p.type_descriptor.annotation
            kind = KIND_OF_TYPE.get(annotation, repr(annotation))
        declared[str(p.name)] = (kind, tuple(p.opts), tuple(p.secondary_opts))
    ours = {name: (kind, on, off) for name, kind, on, off in OPTIONS}
    assert ours == declared
    arguments = [str(p.name) for p in command.params if isinstance(p, typer.core.TyperArgument)]
    assert arguments == ["harness", "provider"]


def test_the_typer_defaults_are_the_options_defaults() -> None:
    defaults = {f.name: f.default for f in dataclasses.fields(LaunchOptions)}
    for p in _launch_command().params:
        if isinstance(p, typer.core.TyperOption):
            field = "json" if p.name == "json_output" else str(p.name)
            assert p.default == defaults[field], p.name


def test_parse_a_plain_command_line() -> None:
    ours, harness = split_harness_args(
        ["codex", "bedrock", "-m", "x", "--region=us-west-2", "-p", "hi", "--", "-p", "--json"]
    )
    assert harness == ("-p", "--json")
    params = parse(ours)
    assert params == {
        "harness": "codex",
        "provider": "bedrock",
        "model": "x",
        "region": "us-west-2",
        "prompt": "hi",
    }
    params = parse(
        ["claude", "--proxy-port", "7", "--max-budget-usd", "1.5", "--home", "h", "--no-observe"]
    )
    assert params is not None
    assert params["proxy_port"] == 7 and params["max_budget_usd"] == 1.5
    assert params["home"] == Path("h") and params["observe"] is False
    assert params["provider"] is None
    assert parse(["claude", "-p", "-"]) == {"harness": "claude", "provider": None, "prompt": "-"}


@pytest.mark.parametrize(
    "args",
    [
        ["claude", "--help"],
        ["claude", "-h"],
        ["claude", "--bogus"],
        ["claude", "-dp", "hi"],  # clustered short options: Typer's
        ["claude", "-p=hi"],  # click reads the value "=hi"
        ["claude", "-p"],  # a missing value
        ["claude", "--max-turns", "three"],
        ["claude", "--dry-run=yes"],
        [],
        ["claude", "api", "extra"],
        ["claude", "--no-proxy", "--with-proxy"],
        ["claude", "--no-proxy", "--with-proxy-if-needed"],
        ["claude", "--proxy-log-level", "loud"],
    ],
)
def test_anything_unusual_goes_to_typer(args: list[str]) -> None:
    assert parse(args) is None


def _corral(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {"CORRAL_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "corral", "launch", *args],
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


HEAVY = ("typer", "click", "rich", "pydantic", "httpx", "asyncio", "starlette", "sqlite3")


def test_a_native_plan_loads_no_typer_and_nothing_heavy(tmp_path: Path) -> None:
    args = ["claude", "custom", "-t", "anthropic", "--api-base", "http://127.0.0.1:9", "-m", "m"]
    done = _corral([*args, "-p", "hi", "--dry-run"], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["proxyNeeded"] is False
    modules = _imported(done.stderr)
    assert "corral.cli._launch_fast" in modules and "corral.launch._plan" in modules
    assert sorted(m for m in modules if m.split(".")[0] in HEAVY) == []
    assert "subprocess" not in modules  # no child to start on the exec path


# What the exec path (a native launch that becomes the harness) must not load: each was a
# measured share of its start-up (decisions 025, 036, 038).
NOT_ON_THE_EXEC_PATH = (
    *HEAVY,
    "subprocess",
    "dataclasses",  # corral._record makes the launch path's classes
    "inspect",
    "typing",
    "platformdirs",  # corral._paths knows the Linux directories
    "tempfile",
    "shutil",
    "tomllib",  # pins.toml pre-parsed
    "datetime",
    "platform",
    "hashlib",
    "msgspec",
)


# A plain launch, and one redirected to a custom endpoint (P3's one-shot rows), which writes its
# configuration through ``corral.redirect``: one redirection module, not all ten.
_REDIRECTED = ["custom", "-t", "anthropic", "--api-base", "http://127.0.0.1:9", "-m", "m"]


@pytest.mark.parametrize("provider", [[], _REDIRECTED], ids=["plain", "redirected"])
def test_the_exec_path_loads_nothing_it_does_not_need(tmp_path: Path, provider: list[str]) -> None:
    """``/bin/true`` as ``claude`` on PATH, no ``CORRAL_*`` variable (as a user runs it)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").symlink_to("/bin/true")
    env = {"HOME": str(tmp_path), "PATH": f"{bin_dir}:/usr/bin:/bin"}
    launch = ["launch", "claude", *provider, "--home", str(tmp_path / "h"), "-p", "hi"]
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "corral", *launch],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    modules = _imported(done.stderr)
    assert "corral.launch._exec" in modules  # the listing is of a launch that reached execve
    top = {m.split(".")[0] for m in modules}
    assert sorted(top & set(NOT_ON_THE_EXEC_PATH)) == []
    redirects = sorted(m for m in modules if m.startswith("corral.redirect."))
    assert redirects == (["corral.redirect._model", "corral.redirect.claude"] if provider else [])


def test_usage_errors_and_help_still_come_from_typer(tmp_path: Path) -> None:
    done = _corral(["claude", "--bogus"], tmp_path)
    assert done.returncode == 2
    assert "No such option: --bogus" in done.stderr
    done = _corral(["--help"], tmp_path)
    assert done.returncode == 0 and "--with-proxy-if-needed" in done.stdout


def test_catalog_errors_from_the_lean_entry(tmp_path: Path) -> None:
    done = _corral(["nosuch", "--json", "--dry-run"], tmp_path)
    assert done.returncode == 60
    lines = [line for line in done.stderr.splitlines() if not line.startswith("import time:")]
    assert json.loads(lines[0])["error"] == "HARNESS_NOT_FOUND"
    assert (
        lines[1].startswith("error: Unknown harness 'nosuch'") and "[HARNESS_NOT_FOUND]" in lines[1]
    )


@pytest.mark.parametrize(
    "args",
    [
        ["claude"],
        ["codex", "bedrock", "-m", "x", "--region=us-west-2", "-p", "hi"],
        ["claude", "-p", "-", "--json", "-d", "--dry-run", "--no-observe"],
        ["opencode", "--profile", "work", "--with-proxy-if-needed", "--proxy-port", "0"],
        ["claude", "custom", "-t", "openai-chat", "--api-base", "http://x/v1", "-m", "m"],
        ["qwen", "-r", "s1", "--max-turns", "3", "--max-budget-usd", "0.5", "--home", "h"],
        ["-p", "hi", "claude", "anthropic", "--api-key", "k", "-p", "again"],  # order; last wins
        ["claude", "--no-proxy", "--proxy-log-level", "debug", "--auth-command", "echo t"],
        ["claude", "--with-proxy", "--no-with-proxy", "-s", "id", "--endpoint-name", "e"],
    ],
)
def test_the_lean_parse_is_typers_parse(args: list[str]) -> None:
    command = _launch_command()
    ctx = command.context_class(command, info_name="launch")
    rest = typer.core.TyperCommand.parse_args(command, ctx, list(args))  # Typer's own parser
    assert rest == []
    defaults = {str(p.name): p.default for p in command.params}
    ours = parse(list(args))
    assert ours is not None
    assert defaults | ours == ctx.params
