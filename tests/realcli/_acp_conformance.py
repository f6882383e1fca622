"""Shared by the ACP agents' conformance tests: run chosen scenarios on one pinned CLI.

Each module shares one scripted model server (``acp_server``) across its tests. A run must have
no FAIL, every capability the adapter declares must have its scenario PASS, and every scenario
the target lists as unsupported must come back UNSUPPORTED (with the target's reason).
"""

from __future__ import annotations

from corral.testing import require_agent
from corral.testing.conformance import run_conformance
from corral.testing.conformance._runner import declared
from corral.testing.conformance._scenarios import SCENARIOS
from corral.testing.conformance._targets import SPECS, build_target
from corral.testing.conformance._types import Outcome, ScenarioResult


def require(agent: str) -> None:
    require_agent(SPECS[agent].redirect)


async def check(agent: str, scenarios: list[str], server: object) -> list[ScenarioResult]:
    require(agent)
    target = build_target(SPECS[agent])
    results = await run_conformance([target], scenarios, server=server)
    table = "\n".join(
        f"  {r.scenario:18s} {r.outcome.value:12s} {r.seconds:5.1f}s {r.reason or ''}"
        for r in results
    )
    failed = [r for r in results if r.outcome is Outcome.FAIL]
    assert not failed, f"{agent} conformance failures:\n{table}"
    for result in results:
        scenario = SCENARIOS[result.scenario]
        if declared(target, scenario):
            assert result.outcome is Outcome.PASS, (
                f"{agent} declares {scenario.capability}:\n{table}"
            )
        if result.scenario in target.unsupported:
            assert result.outcome is Outcome.UNSUPPORTED, table
    return results
