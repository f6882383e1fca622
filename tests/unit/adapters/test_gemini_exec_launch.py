"""``gemini-exec``: argv building (a pure function, no process) and the options it refuses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from corral.adapters.base import construct
from corral.adapters.gemini_exec import GeminiExecAdapter, build_launch
from corral.errors import ConfigError, IntentRefused, UnsupportedOperation

BASE = ["gemini", "--output-format", "stream-json", "--skip-trust"]


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({}, [*BASE, "--prompt=hi"]),
        ({"model": "m"}, [*BASE, "--model", "m", "--prompt=hi"]),
        # the redirection already names the model: no second --model
        (
            {"model": "m", "extra_args": ["--model", "fake-model"]},
            [*BASE, "--model", "fake-model", "--prompt=hi"],
        ),
        ({"model": "m", "extra_args": ["-m=x"]}, [*BASE, "-m=x", "--prompt=hi"]),
        ({"approval_mode": "auto_edit"}, [*BASE, "--approval-mode", "auto_edit", "--prompt=hi"]),
        ({"resume": "sid-1"}, [*BASE, "--resume", "sid-1", "--prompt=hi"]),
        ({"prompt": "-v looks like a flag"}, [*BASE, "--prompt=-v looks like a flag"]),
    ],
)
def test_argv(kwargs: dict[str, Any], expected: list[str], tmp_path: Path) -> None:
    args: dict[str, Any] = {"binary": "gemini", "prompt": "hi", "cwd": str(tmp_path), **kwargs}
    assert build_launch(**args).argv == expected


def test_attachments_are_at_references_and_outside_dirs_are_included(tmp_path: Path) -> None:
    inside = tmp_path / "repo" / "a b.png"
    inside.parent.mkdir()
    outside = tmp_path / "elsewhere" / "doc.pdf"
    launch = build_launch(
        binary="gemini",
        prompt="look",
        cwd=str(inside.parent),
        files=[str(inside), str(outside)],
    )
    argv = launch.argv
    assert argv[argv.index("--include-directories") + 1] == str(outside.parent)
    assert argv.count("--include-directories") == 1  # the repo itself needs none
    assert argv[-1] == f"--prompt=look @{str(inside).replace(' ', chr(92) + ' ')} @{outside}"


def test_an_unknown_approval_mode_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no approval mode 'acceptEdits'"):
        build_launch(binary="g", prompt="p", cwd=str(tmp_path), approval_mode="acceptEdits")
    with pytest.raises(ConfigError, match="no approval mode 'bypass'"):
        GeminiExecAdapter(cwd=str(tmp_path), binary="g", permission_mode="bypass")


def test_effort_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedOperation, match="effort"):
        construct(GeminiExecAdapter, cwd=str(tmp_path), binary="g", effort="high")


@pytest.mark.parametrize("intent", ["ask", "review", "work", "act-pr"])
def test_intents_it_cannot_hold_are_refused(intent: str, tmp_path: Path) -> None:
    with pytest.raises(IntentRefused, match="never asks"):
        construct(GeminiExecAdapter, cwd=str(tmp_path), binary="g", intent=intent)


def test_full_renders_yolo(tmp_path: Path) -> None:
    adapter = construct(GeminiExecAdapter, cwd=str(tmp_path), binary="g", intent="full")
    assert isinstance(adapter, GeminiExecAdapter)
    assert adapter.extra_args[-2:] == ["--approval-mode", "yolo"]


def test_capabilities_are_what_the_conformance_run_showed() -> None:
    caps = GeminiExecAdapter.capabilities()
    assert caps.resume and caps.cancel and caps.image_input
    assert not (caps.permissions or caps.interact or caps.input_during_turn or caps.thinking)


def test_the_conformance_target_grants_yolo_unless_a_scenario_says_otherwise(
    tmp_path: Path,
) -> None:
    from corral.testing.conformance._targets import SPECS, build_target

    target = build_target(SPECS["gemini-exec"], binary="gemini")
    where = {"base_url": "http://127.0.0.1:9", "home": tmp_path, "cwd": tmp_path}
    default = target.make_adapter(**where)
    assert isinstance(default, GeminiExecAdapter) and default.permission_mode == "yolo"
    chosen = target.make_adapter(**where, permission_mode="plan")
    assert isinstance(chosen, GeminiExecAdapter) and chosen.permission_mode == "plan"
