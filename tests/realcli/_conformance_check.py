"""Shared by the whole-suite conformance tests of one pinned CLI: what every run must show.

No scenario fails, no result contradicts what the adapter declares, every ``must_pass`` scenario
and every declared one passes, and (when given) exactly ``unsupported`` comes back unsupported,
each with its reason. Returns the results as a table for the test's own further checks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from corral.testing.conformance._types import Outcome, ScenarioResult


def check_suite(
    results: Sequence[ScenarioResult],
    must_pass: Iterable[str],
    unsupported: Iterable[str] | None = None,
) -> str:
    table = "\n".join(
        f"{r.scenario:18s} {r.outcome.value:12s} {r.seconds:5.1f}s {r.reason or ''}"
        for r in results
    )
    assert not [r for r in results if r.outcome is Outcome.FAIL], f"failures:\n{table}"
    assert not [r for r in results if r.contradicts_declaration], table
    passed = {r.scenario for r in results if r.outcome is Outcome.PASS}
    missing = set(must_pass) - passed
    assert not missing, f"expected to pass: {missing}\n{table}"
    assert {r.scenario for r in results if r.declared} <= passed, table
    if unsupported is not None:
        got = {r.scenario for r in results if r.outcome is Outcome.UNSUPPORTED}
        assert got == set(unsupported), table
        assert all(r.reason for r in results if r.outcome is Outcome.UNSUPPORTED), table
    return table
