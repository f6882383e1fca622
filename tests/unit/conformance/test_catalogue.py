"""One scenario catalogue: every suite, recorder and fixture uses its names; retired names are refused."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from corral.cli import build_app
from corral.cli._common import run_guarded
from corral.errors import ConfigError
from corral.testing import _record_ocpi
from corral.testing._catalogue import CATALOGUE, RETIRED, scenario_name
from corral.testing.conformance import SCENARIOS, run_conformance, scenario_names

TESTS = Path(__file__).resolve().parents[2]
TRANSCRIPTS = TESTS / "fixtures" / "transcripts"


def _codex_extras() -> ModuleType:
    """tests/realcli/codex_extra_scenarios.py (the Codex-only scenarios of scripts/record_codex.py)."""
    path = TESTS / "realcli" / "codex_extra_scenarios.py"
    spec = importlib.util.spec_from_file_location("codex_extra_scenarios", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("codex_extra_scenarios", module)
    spec.loader.exec_module(module)
    return module


def test_retired_names_point_into_the_catalogue_and_are_not_in_it() -> None:
    assert not set(RETIRED) & set(CATALOGUE)
    assert set(RETIRED.values()) <= set(CATALOGUE)


def test_every_suite_and_recorder_uses_catalogue_names() -> None:
    extras = _codex_extras()
    users = {
        "conformance": set(SCENARIOS),
        "opencode/pi recorder": set(_record_ocpi.SCENARIOS),
        "codex extras": set(extras.EXTRA_SCENARIOS) | set(extras.FILE_CHANGE_SCENARIOS),
    }
    for user, names in users.items():
        assert names <= set(CATALOGUE), f"{user}: {sorted(names - set(CATALOGUE))}"


def test_every_fixture_is_named_after_a_catalogue_scenario() -> None:
    stems = {
        p.name.removesuffix(".jsonl")
        for p in TRANSCRIPTS.rglob("*.jsonl")
        if "store" not in p.relative_to(TRANSCRIPTS).parts  # session stores (docs/handoff.md)
    }
    names = {s.removeprefix("exec-") for s in stems}  # codex exec mode: exec-<scenario>
    assert names <= set(CATALOGUE), sorted(names - set(CATALOGUE))
    assert not names & set(RETIRED)


def test_scenario_name_refuses_a_retired_name_naming_its_replacement() -> None:
    assert scenario_name("cancel-mid-turn") == "cancel-mid-turn"
    assert scenario_name("all") == "all"
    with pytest.raises(ConfigError, match="'cancel' is now called 'cancel-mid-turn'"):
        scenario_name("cancel")
    with pytest.raises(ConfigError, match="no scenario 'nope'"):
        scenario_name("nope")


@pytest.mark.parametrize(
    ("argv", "new"),
    [
        (["record", "claude-code", "cancel"], "cancel-mid-turn"),
        (["record", "pi", "rate-limit"], "error-429"),
        (["record", "qwen", "api-error"], "error-400"),
        (["record", "codex", "image"], "image-input"),
        (["conformance", "claude", "-s", "prompt-during-turn"], "input-during-turn"),
    ],
)
def test_the_cli_refuses_retired_names(
    argv: list[str], new: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["corral", *argv])
    assert run_guarded(build_app()) == 2  # bad usage, before any CLI starts
    assert f"is now called '{new}'" in " ".join(capsys.readouterr().err.split())


def test_conformance_refuses_a_scenario_outside_the_suite(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["corral", "conformance", "claude", "-s", "todo"])
    assert run_guarded(build_app()) == 2
    assert "'todo' is no conformance scenario" in " ".join(capsys.readouterr().err.split())


async def test_run_conformance_refuses_retired_names() -> None:
    with pytest.raises(ValueError, match="'image' is now 'image-input'"):
        await run_conformance([], ["image"])


def test_protocol_scenarios_run_only_when_named() -> None:
    protocol = {name for name, s in SCENARIOS.items() if not s.suite}
    assert protocol == {"thinking", "subagent", "error-400"}
    assert not protocol & set(scenario_names())  # `corral conformance` without -s skips them
    assert set(scenario_names()) | protocol == set(SCENARIOS)
