"""Conformance of the ACP adapters on their pinned real CLIs: every scenario, each agent.

A failing scenario fails the test, a declared capability must pass, and what a target lists as
unsupported must come out unsupported (``_acp_conformance.check``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _acp_conformance import check

from corral.testing import FakeModelServer
from corral.testing.conformance import scenario_names

AGENTS = [
    # (conformance target, pinned CLI, seconds allowed for the whole suite)
    ("gemini", "gemini", 240),
    ("qwen-acp", "qwen", 240),
    ("opencode-acp", "opencode", 300),
    ("hermes", "hermes", 360),  # + approval-allow/-deny (edits) since hermes declares permissions
    ("kilo", "kilo", 480),
    ("copilot", "copilot", 240),
]


@pytest.fixture(scope="module")
def acp_server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as server:
        yield server


@pytest.mark.parametrize(
    "agent",
    [
        pytest.param(agent, marks=[pytest.mark.realcli(cli), pytest.mark.timeout(limit)], id=agent)
        for agent, cli, limit in AGENTS
    ],
)
async def test_conformance(agent: str, acp_server: FakeModelServer) -> None:
    await check(agent, scenario_names(), acp_server)
