"""The conformance suite on the pinned real Pi (0.73.1) through the RPC driver (``pi --mode rpc``).

Pi has no approval system and no question tool: those scenarios must come out ``unsupported``
(never ``fail``); everything else must pass.
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
    "cancel-mid-turn",
    "follow-up",
    "input-during-turn",
    "resume-after-exit",
    "image-input",
    "usage",
    "error-429",
}
UNSUPPORTED = {"approval-allow", "approval-deny", "question"}


@pytest.mark.realcli("pi")
@pytest.mark.timeout(300)
async def test_conformance_pi(agent_bin: Callable[[str], Path]) -> None:
    agent_bin("pi")  # skip (fail under CI=true) when the pinned CLI is missing
    results = await run_conformance([build_target(SPECS["pi"])])
    table = "\n".join(
        f"{r.scenario:18s} {r.outcome.value:12s} {r.seconds:5.1f}s {r.reason or ''}"
        for r in results
    )
    assert not [r for r in results if r.outcome is Outcome.FAIL], f"failures:\n{table}"
    assert not [r for r in results if r.contradicts_declaration], table
    passed = {r.scenario for r in results if r.outcome is Outcome.PASS}
    assert passed >= MUST_PASS, f"expected to pass: {MUST_PASS - passed}\n{table}"
    assert {r.scenario for r in results if r.declared} <= passed, table
    unsupported = {r.scenario for r in results if r.outcome is Outcome.UNSUPPORTED}
    assert unsupported == UNSUPPORTED, table
