"""The conformance suite on the pinned real Codex (0.171.0), through both drivers: the app-server
driver (``codex``) and headless exec (``codex-exec``).

Asserts no scenario FAILs, every capability the adapter declares PASSes, and the scenarios this
driver is expected to pass really do (so an "unsupported" cannot hide a regression).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from _conformance_check import check_suite

from corral.testing.conformance import run_conformance
from corral.testing.conformance._targets import SPECS, build_target

MUST_PASS = {
    "codex": {
        "text",
        "tool-shell",
        "approval-allow",
        "approval-deny",
        "cancel-mid-turn",
        "follow-up",
        "input-during-turn",
        "resume-after-exit",
        "image-input",
        "usage",
        "error-429",
    },
    "codex-exec": {
        "text",
        "tool-shell",
        "follow-up",
        "resume-after-exit",
        "image-input",
        "usage",
        "error-429",
    },
}


@pytest.mark.realcli("codex")
@pytest.mark.timeout(900)
@pytest.mark.parametrize("agent", sorted(MUST_PASS))
async def test_conformance(agent: str, agent_bin: Callable[[str], Path]) -> None:
    agent_bin("codex")  # skip (fail under CI=true) when the pinned CLI is missing
    results = await run_conformance([build_target(SPECS[agent])])
    check_suite(results, MUST_PASS[agent])
