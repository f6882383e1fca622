"""The conformance suite on the pinned real OpenCode (1.18.33), through both drivers: the server
driver (``opencode``: ``opencode serve`` + ``/event`` SSE, approvals asked through the session's
permission ruleset) and the headless one (``opencode-run``: one ``opencode run --format json``
per prompt).

Asserts no scenario FAILs, every capability the adapter declares PASSes, and the scenarios each
driver is expected to pass really do (so an "unsupported" cannot hide a regression). One process
per scenario (each gets a fresh HOME and repository): about 2.5 minutes per driver.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from _conformance_check import check_suite

from corral.testing.conformance import run_conformance
from corral.testing.conformance._scenarios import scenario_names
from corral.testing.conformance._targets import SPECS, build_target

MUST_PASS = {
    "opencode": {
        "text",
        "tool-write",
        "tool-shell",
        "approval-allow",
        "approval-deny",
        "question",
        "cancel-mid-turn",
        "follow-up",
        "input-during-turn",
        "resume-after-exit",
        "image-input",
        "usage",
        "error-429",
    },
    "opencode-run": {
        "text",
        "tool-write",
        "tool-shell",
        "follow-up",
        "resume-after-exit",
        "image-input",
        "usage",
        "error-429",
        # outside the default suite, run by name
        "error-400",
        "thinking",
        "subagent",
    },
}
UNSUPPORTED = {
    "opencode-run": {
        "approval-allow",
        "approval-deny",
        "question",
        "cancel-mid-turn",
        "input-during-turn",
    },
}
EXTRA = {"opencode-run": ["error-400", "thinking", "subagent"]}


@pytest.mark.realcli("opencode")
@pytest.mark.timeout(900)
@pytest.mark.parametrize("agent", sorted(MUST_PASS))
async def test_conformance(agent: str, agent_bin: Callable[[str], Path]) -> None:
    agent_bin("opencode")  # skip (fail under CI=true) when the pinned CLI is missing
    names = [*scenario_names(), *EXTRA.get(agent, [])]
    results = await run_conformance([build_target(SPECS[agent])], names)
    check_suite(results, MUST_PASS[agent], UNSUPPORTED.get(agent))
