"""The conformance suite on the pinned real Gemini CLI (0.61.0) through its headless driver
(``gemini-exec``: ``gemini -p --output-format stream-json``, one process per turn).

No scenario may fail, every declared capability must pass, the scenarios below must pass, and
exactly the listed ones come out unsupported (each with its reason).
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
    "cancel-mid-turn",
    "follow-up",
    "resume-after-exit",
    "image-input",
    "usage",
    "error-429",
}
UNSUPPORTED = {"approval-allow", "approval-deny", "question", "input-during-turn"}


@pytest.mark.realcli("gemini")
@pytest.mark.timeout(600)
async def test_conformance(agent_bin: Callable[[str], Path]) -> None:
    agent_bin("gemini")  # skip (fail under CI=true) when the pinned CLI is missing
    results = await run_conformance([build_target(SPECS["gemini-exec"])])
    check_suite(results, MUST_PASS, UNSUPPORTED)
