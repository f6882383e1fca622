"""The drift report, computed from two conformance result sets, wire signatures and the fixture
index (no CLI runs here); and the wire signature itself."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import msgspec
import pytest

from corral.testing.conformance import Outcome, ScenarioResult
from corral.testing.conformance._drift import CliDrift, compute_drift, drift_markdown
from corral.testing.conformance._wire import Fixture, fixture_index, message_kind, signature


def r(agent: str, scenario: str, outcome: str, reason: str | None = None) -> ScenarioResult:
    return ScenarioResult(agent=agent, scenario=scenario, outcome=Outcome(outcome), reason=reason)


def fx(target: str, cli: str, version: str, scenario: str) -> Fixture:
    return Fixture(
        path=f"tests/fixtures/transcripts/{target}/{version}/{scenario}.jsonl",
        target=target,
        cli=cli,
        version=version,
        scenario=scenario,
        command=f"corral record {target} {scenario}",
    )


CLIS = [
    CliDrift(name="qwen", package="@q/cli", pinned="0.15.10", latest="0.24.4", installed=True),
    CliDrift(name="codex", package="@o/codex", pinned="0.171.0", latest="0.171.0", installed=True),
    CliDrift(
        name="kilo",
        package="@k/cli",
        pinned="7.7.7",
        latest="7.8.1",
        installed=False,
        error="installing kilo failed: npm exited 1",
        log_tail="No matching version found for @k/cli-linux-x64@7.8.1.",
    ),
]
A = frozenset({"out method:session/update/agent_message_chunk", "out response:result[stopReason]"})
B = A | {"out method:session/update/available_commands_update"}


def report():  # type: ignore[no-untyped-def]
    pinned = [
        r("qwen-acp", "text", "pass"),
        r("qwen-acp", "follow-up", "pass"),
        r("qwen-acp", "cancel-mid-turn", "pass"),
        r("qwen-acp", "question", "unsupported", "no question request"),
        r("codex", "text", "pass"),
    ]
    latest = [
        r("qwen-acp", "text", "pass"),
        r("qwen-acp", "follow-up", "pass"),
        r("qwen-acp", "cancel-mid-turn", "fail", "turn ended error, not cancelled"),
        r("qwen-acp", "question", "unsupported", "no question request"),
        r("codex", "text", "pass"),
    ]
    wires_old = {("qwen-acp", "text"): A, ("qwen-acp", "follow-up"): A, ("codex", "text"): A}
    wires_new = {("qwen-acp", "text"): B, ("qwen-acp", "follow-up"): A, ("codex", "text"): A}
    fixtures = [
        fx("qwen-acp", "qwen", "0.15.10", "text"),
        fx("qwen-acp", "qwen", "0.15.10", "follow-up"),
        fx("qwen-acp", "qwen", "0.15.10", "cancel-mid-turn"),
        fx("qwen-acp", "qwen", "0.15.10", "store"),
        fx("qwen-acp", "qwen", "0.9.0", "text"),  # an older version's directory: not this pin's
        fx("kilo", "kilo", "7.7.7", "text"),
        fx("codex", "codex", "0.171.0", "text"),
        fx("codex", "codex", "0.171.0", "follow-up"),
    ]
    return compute_drift(
        clis=CLIS,
        target_clis={"qwen-acp": "qwen", "codex": "codex", "kilo": "kilo"},
        pinned_results=pinned,
        latest_results=latest,
        not_run={"kilo": "kilo 7.8.1: installing kilo failed"},
        pinned_wires=wires_old,
        latest_wires=wires_new,
        fixtures=fixtures,
        generated_at="2026-12-01 20:00 UTC",
        machine="Linux x86_64, 2 cores",
        command="corral conformance --latest --write-report docs/drift.md",
    )


def test_scenarios_compare_outcome_and_wire_per_target() -> None:
    rep = report()
    qwen = next(t for t in rep.targets if t.target == "qwen-acp")
    rows = {s.scenario: s for s in qwen.scenarios}
    assert (qwen.pinned, qwen.latest, qwen.ran) == ("0.15.10", "0.24.4", True)
    assert (rows["text"].pinned, rows["text"].latest, rows["text"].wire) == (
        "pass",
        "pass",
        "changed",
    )
    assert rows["text"].wire_added == ["out method:session/update/available_commands_update"]
    assert rows["text"].wire_removed == []
    assert rows["follow-up"].wire == "same" and not rows["follow-up"].changed
    assert rows["cancel-mid-turn"].changed and rows["cancel-mid-turn"].latest == "fail"
    assert rows["cancel-mid-turn"].wire == "not compared"  # no wire on either side
    assert not rows["question"].changed
    assert (qwen.count("pass"), qwen.count("fail"), qwen.count("unsupported")) == (2, 1, 1)
    kilo = next(t for t in rep.targets if t.target == "kilo")
    assert not kilo.ran and kilo.reason == "kilo 7.8.1: installing kilo failed"


def test_fixtures_of_moved_clis_get_a_verdict_and_the_others_are_current() -> None:
    rep = report()
    verdicts = {(f.target, f.scenario): f.verdict for f in rep.fixtures}
    assert verdicts == {
        ("qwen-acp", "text"): "wire changed",
        ("qwen-acp", "follow-up"): "same wire",
        ("qwen-acp", "cancel-mid-turn"): "result changed",
        ("qwen-acp", "store"): "not covered",
        ("kilo", "text"): "unknown",
    }
    assert rep.current_fixtures == 2  # codex's: its newest release is the pin
    assert {f.command for f in rep.fixtures} >= {"corral record qwen-acp text"}


def test_the_report_round_trips_as_json() -> None:
    rep = report()
    data = json.loads(msgspec.json.encode(rep))
    assert data["clis"][0] == {
        "name": "qwen",
        "package": "@q/cli",
        "pinned": "0.15.10",
        "latest": "0.24.4",
        "installed": True,
        "error": None,
        "log_tail": "",
    }
    assert data["command"].startswith("corral conformance --latest")


def test_markdown_shows_versions_changes_fixtures_and_install_failures() -> None:
    page = drift_markdown(report())
    assert page.startswith("# Drift against the newest releases\n")
    assert (
        "`corral conformance --latest --write-report docs/drift.md` on 2026-12-01 20:00 UTC" in page
    )
    assert "| qwen | `@q/cli` | 0.15.10 | 0.24.4 | installed, suite run |" in page
    assert "| codex | `@o/codex` | 0.171.0 | 0.171.0 | is the pin |" in page
    assert "| kilo | `@k/cli` | 7.7.7 | 7.8.1 | not installable: installing kilo failed" in page
    assert "| qwen-acp | qwen | 0.15.10 → 0.24.4 | 2 | 1 | 1 | text, cancel-mid-turn |" in page
    assert (
        "| kilo | kilo | 7.7.7 → 7.8.1 | | | | not run: kilo 7.8.1: installing kilo failed |"
        in page
    )
    assert "| cancel-mid-turn | ✅ pass | ❌ fail | not compared |" in page
    assert "cancel-mid-turn on 0.24.4: turn ended error, not cancelled" in page
    assert "gained `out method:session/update/available_commands_update`" in page
    assert (
        "| `tests/fixtures/transcripts/qwen-acp/0.15.10/text.jsonl` | re-record (the wire changed)"
        in page
    )
    assert "No matching version found for @k/cli-linux-x64@7.8.1." in page
    assert "## codex" not in page  # nothing moved: no per-scenario section


def test_signature_keeps_kinds_and_drops_ids_text_and_counts() -> None:
    one = [
        {"dir": "in", "line": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}},
        {"dir": "out", "line": {"jsonrpc": "2.0", "id": 1, "result": {"agentInfo": {}, "x": 1}}},
        {
            "dir": "out",
            "line": {
                "method": "session/update",
                "params": {
                    "update": {"sessionUpdate": "agent_message_chunk", "content": {"text": "Hel"}}
                },
            },
        },
        {"dir": "out", "text": "not json"},
        {"dir": "exit", "code": 0},
    ]
    two = [*one[:2], one[2], one[2], {"dir": "out", "text": "other"}, {"dir": "exit", "code": 1}]
    two[0] = {**one[0], "id": 7}
    assert signature(one) == signature(two)
    assert signature(one) == {
        "in method:initialize",
        "out response:result[agentInfo,x]",
        "out method:session/update/agent_message_chunk",
        "out text",
        "exit",
    }
    assert signature(one) != signature(
        [*one, {"dir": "out", "line": {"type": "result", "subtype": "success"}}]
    )


def test_message_kinds_of_each_wire_family() -> None:
    assert message_kind({"type": "control_request", "request": {"subtype": "initialize"}}) == (
        "type:control_request/initialize"
    )
    assert message_kind({"type": "stream_event", "event": {"type": "content_block_delta"}}) == (
        "type:stream_event/content_block_delta"
    )
    assert message_kind(
        {"method": "item/started", "params": {"item": {"type": "agentMessage"}}}
    ) == ("method:item/started/agentMessage")
    http = {"method": "POST", "path": "/session/ses_3fa9c1d2e4/message", "status": 200, "body": {}}
    assert message_kind(http) == "http:POST /session/:id/message 200"
    assert message_kind({"id": 3, "error": {"code": -32601, "message": "x"}}) == (
        "response:error[code,message]"
    )
    assert message_kind(["a"]) == "json:list"
    assert message_kind({"b": 1, "a": 2}) == "keys:a,b"
    assert message_kind({"type": "x" * 500}) == "keys:type"  # no unbounded strings


def test_fixture_index_reads_every_meta_file(tmp_path: Path) -> None:
    root = tmp_path / "transcripts"
    for rel, meta in {
        "claude/2.1.197/text": {"cli": "claude", "command": "corral record claude-code text"},
        "codex/0.171.0/exec-text": {"cli": "codex", "adapter": "codex-exec"},
        "qwen-acp/0.15.10/follow-up": {"cli": "qwen"},
        "qwen/0.15.10/store": {"cli": "qwen", "command": "corral record qwen store"},
    }.items():
        path = root / f"{rel}.meta.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(meta))
    (root / "claude/2.1.197/broken.meta.json").write_text("{oops")
    index = {(f.target, f.scenario): f for f in fixture_index(root)}
    assert set(index) == {
        ("claude", "text"),
        ("codex-exec", "text"),
        ("qwen-acp", "follow-up"),
        ("qwen", "store"),
    }
    assert index[("claude", "text")].command == "corral record claude-code text"
    assert index[("codex-exec", "text")].command == "corral record codex-exec text"
    assert index[("qwen-acp", "follow-up")].cli == "qwen"
    assert index[("qwen", "store")].path.endswith("qwen/0.15.10/store")
    assert index[("claude", "text")].path.endswith("claude/2.1.197/text.jsonl")


def test_the_real_fixture_index_covers_every_recorded_fixture() -> None:
    root = Path(__file__).parents[2] / "fixtures" / "transcripts"
    index = fixture_index(root)
    metas = list(root.glob("*/*/*.meta.json"))
    assert len(index) == len(metas) > 0
    assert all(f.version == Path(f.path).parent.name for f in index if not f.path.endswith("store"))


def test_conformance_latest_refuses_what_it_cannot_honour(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from corral.cli import build_app
    from corral.cli._common import run_guarded

    monkeypatch.setenv("CORRAL_LATEST_DIR", str(tmp_path / "empty"))
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path / "home"))
    out = str(tmp_path / "x.md")
    for argv, code, said in (
        (["conformance", "--write-report", out], 2, "--write-report needs --latest"),
        (["conformance", "--latest", "--write-docs", out], 2, "cannot go with --latest"),
        (["conformance", "--latest", "--write-report", out], 1, "agents install --latest` first"),
    ):
        monkeypatch.setattr(sys, "argv", ["corral", *argv])
        assert run_guarded(build_app()) == code
        assert said in capsys.readouterr().err
    assert not (tmp_path / "x.md").exists()
