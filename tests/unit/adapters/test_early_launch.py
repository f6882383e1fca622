"""Every early-launch hook (``adapters/_early.py``) builds the launch its driver starts: the
driver's own ``start`` (and, for a one-process-per-prompt driver, its first ``send``) runs until
it asks its transport factory for the process."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from corral.adapters import BUILTIN_ADAPTERS
from corral.adapters._early import EARLY_LAUNCHES, EarlyRequest, early_hook
from corral.adapters._options import LaunchOptions
from corral.adapters.base import construct
from corral.registry._builtin import resolve_builtin

PROMPT = "-Say hello. @file"

OPTION_SETS: list[dict[str, Any]] = [
    {},
    {"model": "corral/fake-model"},
    {"binary": "/opt/agent/bin/cli"},
    {"extra_args": ("--auth-type", "openai", "--x=1")},
    {"model": "p/m", "binary": "/opt/cli", "extra_args": ("--debug",)},
    {"model": "p/m", "extra_args": ("--model", "q/n")},
    # Codex lifts these out of argv into thread/start; the others pass them on
    {
        "extra_args": (
            "-c",
            "approval_policy=never",
            "--config=sandbox_mode='read-only'",
            "-c",
            "x=1",
        )
    },
]


@pytest.mark.parametrize("adapter_id", sorted(EARLY_LAUNCHES))
@pytest.mark.parametrize("given", OPTION_SETS)
def test_the_hook_builds_the_drivers_launch(
    adapter_id: str, given: dict[str, Any], tmp_path: Path
) -> None:
    cls = resolve_builtin(adapter_id)
    assert cls is not None
    adapter: Any = construct(cls, LaunchOptions.create(cwd=tmp_path, **given))
    asked: list[tuple[tuple[str, ...], dict[str, str], str | None]] = []

    def factory(
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        tap: object = None,
    ) -> Any:
        asked.append((tuple(argv), dict(env or {}), cwd))
        raise _Asked

    async def drive() -> None:
        await adapter.start("s")
        await adapter.send(PROMPT)

    adapter.transport_factory = factory
    with pytest.raises(_Asked):
        asyncio.run(drive())
    hook = early_hook(adapter_id)
    assert hook is not None
    request = EarlyRequest(cwd=str(tmp_path), base_env=os.environ, prompt=PROMPT, **given)
    early = hook(request)
    assert asked == [(early.argv, early.env, early.cwd)]


class _Asked(Exception):
    """The driver asked for its process (the test stops it there)."""


def test_every_hook_names_a_built_in_and_none_an_alias() -> None:
    assert set(EARLY_LAUNCHES) <= set(BUILTIN_ADAPTERS)
    early = {
        "claude-code",
        "qwen",
        "pi",
        "gemini",
        "hermes",
        "gemini-exec",
        "opencode-run",
        "codex",
        "codex-exec",
    }
    assert early <= set(EARLY_LAUNCHES)
    assert early_hook("claude") is None  # callers resolve aliases first (``builtin_id``)
    assert early_hook("opencode") is None
