"""Conformance of ``qwen-acp`` (QwenAcpAdapter over ACP) on the pinned real CLI."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _acp_conformance import check, declared_scenarios

from corral.testing import FakeModelServer

AGENT = "qwen-acp"
SCENARIOS = [
    "text",
    "tool-write",
    "approval-allow",
    "approval-deny",
    "cancel-mid-turn",
    "follow-up",
    "resume-after-exit",
    "usage",
    "image-input",
    "tool-shell",
    "error-429",
    "question",
    "input-during-turn",
]


@pytest.fixture(scope="module")
def acp_server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as server:
        yield server


def test_runs_every_declared_capability() -> None:
    missing = set(declared_scenarios(AGENT)) - set(SCENARIOS)
    assert not missing, f"declared but not exercised: {sorted(missing)}"


@pytest.mark.realcli("qwen")
@pytest.mark.timeout(240)
async def test_conformance(acp_server: FakeModelServer) -> None:
    await check(AGENT, SCENARIOS, acp_server)
