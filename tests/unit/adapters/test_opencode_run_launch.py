"""``opencode run`` argv/env, table-driven, without a process."""

from __future__ import annotations

from typing import Any

import pytest

from corral.adapters._opencode_run_launch import run_launch
from corral.errors import ConfigError

BASE = ["oc", "run", "--format", "json", "--thinking"]


@pytest.mark.parametrize(
    ("options", "argv"),
    [
        ({}, [*BASE, "--", "hi"]),
        ({"session_id": "ses_1"}, [*BASE, "--session", "ses_1", "--", "hi"]),
        ({"model": "corral/fake-model"}, [*BASE, "--model", "corral/fake-model", "--", "hi"]),
        (
            {"files": ["/a.png", "/b.txt"]},
            [*BASE, "--file", "/a.png", "--file", "/b.txt", "--", "hi"],
        ),
        ({"extra_args": ["--agent", "plan"]}, [*BASE, "--agent", "plan", "--", "hi"]),
        ({"prompt": "--help"}, [*BASE, "--", "--help"]),
    ],
)
def test_argv(options: dict[str, Any], argv: list[str]) -> None:
    args: dict[str, Any] = {"binary": "oc", "prompt": "hi", "cwd": "/w", "env": {}, **options}
    assert list(run_launch(**args).argv) == argv


def test_pwd_is_the_working_directory_whatever_the_caller_inherited() -> None:
    launch = run_launch(binary="oc", prompt="hi", cwd="/w", env={"PWD": "/elsewhere", "A": "1"})
    assert launch.env == {"PWD": "/w", "A": "1"}
    assert launch.cwd == "/w"


@pytest.mark.parametrize("model", ["fake-model", "/m", "p/", ""])
def test_model_without_a_provider_is_refused(model: str) -> None:
    with pytest.raises(ConfigError, match="provider/model"):
        run_launch(binary="oc", prompt="hi", cwd="/w", env={}, model=model)
