"""``/api/settings``: defaults per adapter, recorded conformance results and verification
(profiles and the launch gate: test_profiles_gate.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from corral.testing.conformance import Outcome, ScenarioResult
from corral.testing.conformance._results import load_results, save_results

from .conftest import client_for, make_app

MANIFEST = {
    "id": "catty",
    "displayName": "Catty",
    "executables": ["cat"],
    "launchCommand": "cat",
    "supportedPlatforms": ["linux", "macos"],
    "supportedApprovalPolicies": ["full"],
    "promptInjection": "stdin",
    "supportsStructured": True,
    "streaming": {
        "preferred": {
            "launchCommand": "cat",
            "promptDelivery": "json-rpc",
            "protocol": "plain-stdin",
            "sessionMode": "persistent-session",
            "supportsFollowUp": True,
        }
    },
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "corral-home"
    home.mkdir()
    monkeypatch.setenv("CORRAL_HOME", str(home))
    monkeypatch.delenv("CORRAL_EXT_ADAPTERS_DIR", raising=False)
    return home


def _write_manifest(home: Path, launch: str) -> None:
    data = json.loads(json.dumps(MANIFEST))
    data["streaming"]["preferred"]["launchCommand"] = launch
    (home / "adapters").mkdir(exist_ok=True)
    (home / "adapters" / "catty.json").write_text(json.dumps(data))


def _state(view: dict[str, object], adapter_id: str) -> dict[str, object]:
    rows = view["verification"]
    assert isinstance(rows, list)
    return next(r for r in rows if r["adapter_id"] == adapter_id)


async def test_defaults_are_stored_validated_and_forgotten(tmp_path: Path, home: Path) -> None:
    async with client_for(make_app(tmp_path)) as client:
        url = "/api/settings/adapters/scripted/defaults"
        r = await client.put(url, json={"model": "m2", "effort": "high"})
        assert r.status_code == 200, r.text
        assert r.json()["adapter_defaults"]["scripted"] == {
            "model": "m2",
            "effort": "high",
            "intent": None,
        }
        # an intent the adapter cannot enforce is refused, as at launch
        r = await client.put(url, json={"intent": "review"})
        assert r.status_code == 422 and r.json()["code"] == "intent_refused"
        assert (await client.put(url, json={"effort": "Extreme!"})).status_code == 422
        assert (await client.put(url, json={"intent": "sudo"})).status_code == 422
        assert (await client.put(url, json={"model": " "})).status_code == 422
        assert (await client.put(url, json={"colour": "red"})).status_code == 422
        missing = "/api/settings/adapters/no-such/defaults"
        assert (await client.put(missing, json={})).status_code == 404
    async with client_for(make_app(tmp_path)) as client:  # kept across a restart
        view = (await client.get("/api/settings")).json()
        assert view["adapter_defaults"]["scripted"]["model"] == "m2"
        r = await client.put("/api/settings/adapters/scripted/defaults", json={})
        assert "scripted" not in r.json()["adapter_defaults"]


async def test_conformance_results_per_version(tmp_path: Path, home: Path) -> None:
    first = [
        ScenarioResult(agent="claude", scenario="text", outcome=Outcome.PASS, seconds=1.0),
        ScenarioResult(agent="claude", scenario="question", outcome=Outcome.FAIL, reason="x"),
    ]
    save_results(first, versions={"claude": "2.1.197"}, adapters={"claude": "claude-code"})
    again = [ScenarioResult(agent="claude", scenario="question", outcome=Outcome.PASS)]
    save_results(again, versions={"claude": "2.1.197"}, adapters={"claude": "claude-code"})
    stored = load_results()["claude"]
    assert [(r.scenario, r.outcome) for r in stored.results] == [
        ("text", Outcome.PASS),
        ("question", Outcome.PASS),
    ]
    async with client_for(make_app(tmp_path)) as client:
        rows = (await client.get("/api/settings/conformance")).json()
        assert rows[0]["adapter_id"] == "claude-code" and rows[0]["version"] == "2.1.197"
        assert {r["scenario"]: r["outcome"] for r in rows[0]["results"]} == {
            "text": "pass",
            "question": "pass",
        }
    newer = [ScenarioResult(agent="claude", scenario="usage", outcome=Outcome.PASS)]
    save_results(newer, versions={"claude": "2.2.0"}, adapters={"claude": "claude-code"})
    assert [r.scenario for r in load_results()["claude"].results] == ["usage"]
