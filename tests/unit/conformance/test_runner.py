"""The conformance machinery, exercised with a reference adapter over the real scripted server."""

from pathlib import Path
from typing import Any

from corral.adapters.base import construct
from corral.testing import FakeModelServer
from corral.testing.conformance import (
    Outcome,
    Target,
    compatibility_markdown,
    run_conformance,
)

from ._reference_adapter import ReferenceAdapter


def _target() -> Target:
    def make(*, base_url: str, home: Path, cwd: Path, **init: Any) -> ReferenceAdapter:
        adapter = construct(
            ReferenceAdapter, cwd=str(cwd), env={"CORRAL_MODEL_BASE_URL": base_url}, **init
        )
        assert isinstance(adapter, ReferenceAdapter)
        return adapter

    return Target(
        agent="reference",
        adapter_class=ReferenceAdapter,
        make_adapter=make,
        unsupported={"usage": "pretend this CLI reports no usage"},
        turn_timeout=20,
    )


async def test_outcomes_and_declared_capability_cross_check() -> None:
    async with FakeModelServer() as server:
        results = await run_conformance(
            [_target()],
            ["text", "tool-write", "follow-up", "cancel-mid-turn", "image-input", "usage"],
            server=server,
        )
    by = {r.scenario: r for r in results}
    assert by["text"].outcome is Outcome.PASS, by["text"].reason
    assert by["tool-write"].outcome is Outcome.PASS, by["tool-write"].reason
    assert by["follow-up"].outcome is Outcome.PASS, by["follow-up"].reason
    # Not declared → unsupported, with the reason.
    assert by["cancel-mid-turn"].outcome is Outcome.UNSUPPORTED
    assert "cancel" in (by["cancel-mid-turn"].reason or "")
    # Declared but not delivered → fail, and flagged as contradicting the declaration.
    assert by["image-input"].outcome is Outcome.FAIL
    assert by["image-input"].contradicts_declaration
    assert "image" in (by["image-input"].reason or "")
    assert by["usage"].outcome is Outcome.UNSUPPORTED
    assert by["usage"].reason == "pretend this CLI reports no usage"
    page = compatibility_markdown(results)
    assert "| tool-write | ✅ pass |" in page
    assert "reference / image-input: no request to the model held an image block" in page


async def test_a_failing_expectation_is_reported_not_raised(tmp_path: Path) -> None:
    # The reference adapter never asks for approval, so the deny scenario must fail cleanly
    # once the adapter declares the permissions capability.
    class Claims(ReferenceAdapter):
        agent_id = "reference-claims"
        cap_permissions = True
        provides_models = False
        provides_usage = False

    target = _target()
    target.adapter_class = Claims
    make = target.make_adapter
    target.make_adapter = lambda **kw: make(**kw)
    async with FakeModelServer() as server:
        (res,) = await run_conformance([target], ["approval-deny"], server=server)
    assert res.outcome is Outcome.FAIL
    assert res.reason == "the agent never asked for approval"
    assert res.contradicts_declaration
