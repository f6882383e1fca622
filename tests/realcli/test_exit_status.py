"""A failed shell command keeps its exit status on the pinned real CLIs whose payload carries it
(OpenCode over ACP: ``rawOutput.metadata.exit``), through the conformance rig."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from corral.events import ApprovalDecision, ApprovalRequested, Event, ToolCallCompleted
from corral.testing import FakeModelServer
from corral.testing.conformance import Outcome
from corral.testing.conformance import run_scenario as run_conformance_scenario
from corral.testing.conformance._context import Context
from corral.testing.conformance._scenarios import ConformanceScenario
from corral.testing.conformance._session import LiveSession, expect
from corral.testing.conformance._targets import SPECS, build_target

SCRIPT = {
    "steps": [
        {
            "name": "failing-command",
            "match": {"last_is_tool_result": False},
            "times": 1,
            "reply": {"tool_calls": [{"capability": "shell", "command": "echo nope; exit 3"}]},
        }
    ],
    "default": {"text": "Hello from the scripted model.", "chunks": 2},
}


async def failing_command(ctx: Context) -> None:
    async def allow(s: LiveSession, event: Event) -> None:
        if isinstance(event, ApprovalRequested):
            await s.adapter.respond_approval(event.request_id, ApprovalDecision.ALLOW)

    async with ctx.session() as s:
        await s.send("Run the failing command.")
        turn = await s.turn(ctx.timeout, on_event=lambda e: allow(s, e))
    done = turn.of(ToolCallCompleted)
    expect(done, f"no tool.completed ({turn.describe()})")
    result = done[0].result
    expect(result.exit_code == 3, f"exit code {result.exit_code!r}, not 3 ({result!r})")
    expect(result.is_error, "a command that exited 3 is not marked an error")


@pytest.mark.realcli("opencode")
@pytest.mark.timeout(300)
async def test_opencode_acp_carries_a_failed_commands_exit_code(
    agent_bin: Callable[[str], Path],
) -> None:
    agent_bin("opencode")
    scenario = ConformanceScenario(
        "exit-status", "a failed command's exit code", failing_command, SCRIPT, None
    )
    async with FakeModelServer() as server:
        result = await run_conformance_scenario(
            build_target(SPECS["opencode-acp"]), scenario, server
        )
    assert result.outcome is Outcome.PASS, result.reason
