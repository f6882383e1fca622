"""The conformance suite on the pinned real Hermes (0.19.0) through its TUI gateway
(``python -m tui_gateway.entry``, adapter ``hermes-gateway``).

The gateway interrupts a running turn for a prompt sent into it, so corral holds such a prompt
(``input-during-turn`` unsupported). Everything else must pass, approvals (a flagged command),
the clarify question and an image included.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from _conformance_check import check_suite

from corral.testing.conformance import run_conformance
from corral.testing.conformance._targets import SPECS, build_target

MUST_PASS = {
    "text",
    "tool-write",
    "tool-shell",
    "approval-allow",
    "approval-deny",
    "question",
    "cancel-mid-turn",
    "follow-up",
    "resume-after-exit",
    "image-input",
    "usage",
    "error-429",
}
UNSUPPORTED = {"input-during-turn"}


@pytest.mark.realcli("hermes")
@pytest.mark.timeout(600)
async def test_conformance_hermes_gateway(agent_bin: Callable[[str], Path]) -> None:
    agent_bin("hermes")  # skip (fail under CI=true) when the pinned CLI is missing
    results = await run_conformance([build_target(SPECS["hermes-gateway"])])
    check_suite(results, MUST_PASS, UNSUPPORTED)
