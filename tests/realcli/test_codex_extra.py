"""Codex behaviour beyond the shared suite, on the pinned real CLI (codex_extra_scenarios.py).

File-change approvals on the pinned real Codex: with a model catalog that gives ``fake-model``
the ``apply_patch`` tool (see codex_extra_scenarios), codex asks before each edit under
``approvalPolicy: "untrusted"``; allowed edits land with a diff, refused ones do not.

Also records what the shared suite's ``tool-write`` does here: the edit is a real ``apply_patch``
with kind edit and a diff, but apply_patch always ends a file with a newline, so the suite's exact
``"hi"`` content check cannot hold — which is why the codex target lists tool-write unsupported.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from codex_extra_scenarios import (
    EXTRA_SCENARIOS,
    FILE_CHANGE_SCENARIOS,
    extra_target,
    with_catalog,
    write_catalog,
)

from corral.testing import FakeModelServer
from corral.testing.conformance._runner import run_scenario
from corral.testing.conformance._scenarios import SCENARIOS
from corral.testing.conformance._targets import SPECS, build_target
from corral.testing.conformance._types import Outcome


@pytest.mark.realcli("codex")
@pytest.mark.timeout(300)
async def test_file_change_approvals(agent_bin: Callable[[str], Path], tmp_path: Path) -> None:
    agent_bin("codex")
    target = with_catalog(build_target(SPECS["codex"]), write_catalog(tmp_path / "models.json"))
    async with FakeModelServer() as server:
        results = {
            name: await run_scenario(target, scenario, server)
            for name, scenario in FILE_CHANGE_SCENARIOS.items()
        }
        tool_write = await run_scenario(target, SCENARIOS["tool-write"], server)
    for name, result in results.items():
        assert result.outcome is Outcome.PASS, f"{name}: {result.reason}"
    # the edit itself conforms; only apply_patch's trailing newline can trip the exact-content check
    assert (
        tool_write.outcome is Outcome.PASS
        or tool_write.reason == "hello.txt holds 'hi\\n', not 'hi'"
    )


@pytest.mark.realcli("codex")
@pytest.mark.timeout(300)
async def test_extra_scenarios(agent_bin: Callable[[str], Path]) -> None:
    """Sub-agents, reasoning, a failed turn, streamed command output (codex_extra_scenarios)."""
    agent_bin("codex")
    target = extra_target(build_target(SPECS["codex"]))
    async with FakeModelServer() as server:
        for name, scenario in EXTRA_SCENARIOS.items():
            result = await run_scenario(target, scenario, server)
            assert result.outcome is Outcome.PASS, f"{name}: {result.reason}"
