"""``corral conformance`` records its results per agent and installed CLI version."""

from __future__ import annotations

from pathlib import Path

import pytest

from corral import agents
from corral.cli.conformance import _record
from corral.testing.conformance import Outcome, ScenarioResult
from corral.testing.conformance._results import load_results, results_path


def test_a_run_is_recorded_with_the_installed_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path))
    _record(
        [
            ScenarioResult(agent="qwen-acp", scenario="text", outcome=Outcome.PASS),
            ScenarioResult(agent="my-dropin", scenario="text", outcome=Outcome.FAIL, reason="r"),
            "not a result",
        ]
    )
    stored = load_results()
    qwen = next(s for s in agents.status() if s.name == "qwen")
    assert stored["qwen-acp"].adapter_id == "qwen-acp"
    assert stored["qwen-acp"].version == qwen.installed  # None when only found on PATH
    assert stored["my-dropin"].adapter_id == "my-dropin" and stored["my-dropin"].version is None
    assert stored["my-dropin"].results[0].reason == "r"
    assert results_path().stat().st_mode & 0o077 == 0
