"""The ``corral serve`` benchmark hook: a built-in class plus the bare CLI's binary, env and argv."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

from benchmarks._serve_targets import TARGETS_ENV, attribute, extra_adapters, redirected

from corral.adapters._options import LaunchOptions
from corral.adapters.base import construct
from corral.adapters.claude import ClaudeAdapter

ROOT = Path(__file__).resolve().parents[3]


def test_the_redirected_class_adds_binary_env_and_argv_to_what_the_manager_offers(
    tmp_path: Path,
) -> None:
    cls = redirected(ClaudeAdapter, binary="/pinned/claude", env={"HOME": "/h"}, argv=["--x"])
    assert cls.agent_id == "claude-code" and issubclass(cls, ClaudeAdapter)
    assert inspect.signature(cls.__init__) == inspect.signature(ClaudeAdapter.__init__)
    adapter = construct(cls, LaunchOptions.create(cwd=str(tmp_path), model="fake-model"))
    launch = adapter.build(adapter.launch_request())  # type: ignore[attr-defined]
    assert launch.argv[0] == "/pinned/claude"
    assert launch.argv[-3:] == ("--model", "fake-model", "--x")
    assert launch.env["HOME"] == "/h"
    assert launch.cwd == str(tmp_path)


def test_extra_adapters_names_one_class_per_id() -> None:
    assert attribute("claude-code") == "claude_code"
    assert extra_adapters(["claude-code", "pi"]) == (
        "benchmarks._serve_targets:claude_code,benchmarks._serve_targets:pi"
    )


def test_the_service_registry_resolves_the_built_in_id_to_the_redirected_class(
    tmp_path: Path,
) -> None:
    # In a fresh interpreter, as the corral serve child loads it (the module reads its env once).
    targets = {"pi": {"binary": "/pinned/pi", "env": {"A": "1"}, "argv": ["--offline"]}}
    code = (
        "from corral.registry import Registry\n"
        "r = Registry()\n"
        "cls = r.resolve('pi')\n"
        "print(cls.__module__, cls.__mro__[1].__name__, r.manifest('pi').id)\n"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "CORRAL_HOME": str(tmp_path),
        TARGETS_ENV: json.dumps(targets),
        "CORRAL_EXTRA_ADAPTERS": extra_adapters(targets),
    }
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["benchmarks._serve_targets", "PiAdapter", "pi"]
