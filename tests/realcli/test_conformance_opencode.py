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

from corral.testing.conformance import run_conformance
from corral.testing.conformance._targets import SPECS, build_target
from corral.testing.conformance._types import Outcome

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
    table = "\n".join(
        f"{r.scenario:18s} {r.outcome.value:12s} {r.seconds:5.1f}s {r.reason or ''}"
        for r in results
    )
    assert not [r for r in results if r.outcome is Outcome.FAIL], f"failures:\n{table}"
    assert not [r for r in results if r.contradicts_declaration], table
    passed = {r.scenario for r in results if r.outcome is Outcome.PASS}
    assert passed >= MUST_PASS, f"expected to pass: {MUST_PASS - passed}\n{table}"
    assert {r.scenario for r in results if r.declared} <= passed, table
