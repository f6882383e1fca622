"""``corral launch`` command line: the fast parse and typer's agree; ``--`` splits the harness's."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from corral.cli import build_app


def run(args: list[str], tmp_path: Path) -> tuple[int, str]:
    env = {"CORRAL_HOME": str(tmp_path), "COLUMNS": "300", "TERM": "dumb"}
    result = CliRunner().invoke(build_app(), ["launch", *args], env=env)
    return result.exit_code, result.output


def test_fast_parse_builds_the_same_plan_as_typer(tmp_path: Path) -> None:
    args = [
        "claude",
        "custom",
        "-t",
        "openai-chat",
        "--api-base=http://127.0.0.1:9/v1",
        "-m",
        "m",
        "--with-proxy-if-needed",
        "--max-turns",
        "3",
        "--session-id",
        "s1",
        "-p",
        "hi there",
        "--dry-run",
    ]
    code, out = run([*args, "--", "--bare", "-p"], tmp_path)
    assert code == 0, out
    fast = json.loads(out)
    assert fast["harnessArgs"] == ["--bare", "-p"]
    assert fast["args"][-2:] == ["-p", "hi there"]
    assert fast["args"][:4] == ["--session-id", "s1", "--max-turns", "3"]
    # a value typer must parse (a repeated flag with --no- form) takes the slow path: same plan
    code, out = run([*args, "--no-observe", "--", "--bare", "-p"], tmp_path)
    assert code == 0, out
    assert json.loads(out) == fast


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    code, _ = run(["claude", "--no-proxy", "--with-proxy", "--dry-run"], tmp_path)
    assert code == 2
    code, _ = run(["claude", "--proxy-log-level", "loud", "--dry-run"], tmp_path)
    assert code == 2
    code, _ = run(["claude", "--bogus"], tmp_path)
    assert code == 2


def test_help_lists_every_seed_flag(tmp_path: Path) -> None:
    code, out = run(["--help"], tmp_path)
    assert code == 0
    for flag in (
        "--model",
        "--api-key",
        "--api-base",
        "--region",
        "--project",
        "--resource-group",
        "--endpoint-name",
        "--transport",
        "--profile",
        "--auth-command",
        "--with-proxy-if-needed",
        "--with-proxy",
        "--no-proxy",
        "--proxy-port",
        "--proxy-log-level",
        "--resume",
        "--session-id",
        "--prompt",
        "--max-turns",
        "--max-budget-usd",
        "--json",
        "--debug",
        "--dry-run",
        "--observe",
        "--home",
    ):
        assert flag in out, flag
