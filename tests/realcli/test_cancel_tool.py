"""Cancel during a running ``sleep 30`` shell tool, on every pinned agent that supports cancel:
the turn ends cancelled, no tool process is left (checked in /proc by the sleep's own marker
argument), and the next prompt reaches the scripted model (its request log).

Uses the conformance rig (targets, scripted server, workspace); the scenario is
:mod:`corral.testing.conformance._cancel_tool`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from corral.testing import FakeModelServer
from corral.testing.conformance import Outcome
from corral.testing.conformance import run_scenario as run_conformance_scenario
from corral.testing.conformance._cancel_tool import cancel_tool_scenario
from corral.testing.conformance._targets import SPECS, build_target

# docs/compatibility.md: every target but codex-exec passes cancel-mid-turn.
AGENTS = {
    "claude": "claude",
    "qwen": "qwen",
    "codex": "codex",
    "gemini": "gemini",
    "gemini-exec": "gemini",
    "qwen-acp": "qwen",
    "opencode-acp": "opencode",
    "hermes": "hermes",
    "opencode": "opencode",
    "pi": "pi",
}


@pytest.mark.realcli
@pytest.mark.timeout(300)
@pytest.mark.parametrize("agent", sorted(AGENTS))
async def test_cancel_during_a_shell_tool(agent: str, agent_bin: Callable[[str], Path]) -> None:
    agent_bin(AGENTS[agent])  # skip (fail under CI=true) when the pinned CLI is missing
    target = build_target(SPECS[agent])
    async with FakeModelServer() as server:
        result = await run_conformance_scenario(target, cancel_tool_scenario(agent), server)
    assert result.declared, f"{agent} does not declare cancel"
    assert result.outcome is Outcome.PASS, result.reason
