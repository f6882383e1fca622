"""The conformance suite on the pinned real OpenCode (1.18.33) through the server driver
(``opencode serve`` + ``/event`` SSE), approvals asked through the session's permission ruleset.

Asserts no scenario FAILs, every capability the adapter declares PASSes, and the scenarios this
driver is expected to pass really do (so an "unsupported" cannot hide a regression). One
``opencode serve`` per scenario (each gets a fresh HOME and repository): about 2.5 minutes.
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
    "input-during-turn",
    "resume-after-exit",
    "image-input",
    "usage",
    "error-429",
}


@pytest.mark.realcli("opencode")
@pytest.mark.timeout(600)
async def test_conformance_opencode(agent_bin: Callable[[str], Path]) -> None:
    agent_bin("opencode")  # skip (fail under CI=true) when the pinned CLI is missing
    results = await run_conformance([build_target(SPECS["opencode"])])
    check_suite(results, MUST_PASS)
