"""Claude Code driven through ClaudeAdapter (stream-json + control protocol) on the pinned CLI.

The conformance scenarios run first (each must pass, or be unsupported exactly when the adapter
does not declare the capability); then cases only the stream-json driver has, the recorder, and
``corral run`` end to end.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import _stream_json_cases as cases
import pytest
from _stream_json_cases import Env, envelopes

from corral.adapters.claude import ClaudeAdapter
from corral.testing import FakeModelServer
from corral.testing._record_targets import record
from corral.testing.conformance import SCENARIOS, Outcome
from corral.testing.conformance import run_scenario as run_conformance_scenario
from corral.testing.conformance._targets import SPECS, build_target

AGENT = "claude"
pytestmark = [pytest.mark.realcli(AGENT), pytest.mark.timeout(240)]


@pytest.fixture
def env(agent_bin: Callable[[str], Path], isolated_home: Path, git_repo: Path) -> Iterator[Env]:
    binary = agent_bin(AGENT)
    with FakeModelServer() as server:
        yield Env(AGENT, ClaudeAdapter, binary, server, isolated_home, git_repo)


@pytest.mark.parametrize("scenario", list(SCENARIOS))
async def test_conformance(scenario: str, agent_bin: Callable[[str], Path]) -> None:
    agent_bin(AGENT)
    target = build_target(SPECS[AGENT])
    async with FakeModelServer() as server:
        result = await run_conformance_scenario(target, SCENARIOS[scenario], server)
    if result.declared is False:
        assert result.outcome is Outcome.UNSUPPORTED, result
    else:
        assert result.outcome is Outcome.PASS, result.reason


async def test_thinking_is_streamed(env: Env) -> None:
    await cases.case_thinking(env)


async def test_subagent_traffic_nests(env: Env) -> None:
    await cases.case_subagent(env)


async def test_pdf_goes_as_a_document_block(env: Env) -> None:
    await cases.case_document(env)


async def test_allow_always_remembers_for_the_session(env: Env) -> None:
    await cases.case_allow_always(env)


async def test_runtime_set_model_and_permission_mode(env: Env) -> None:
    await cases.case_set_model_and_mode(env)


async def test_recorder_writes_a_replayable_transcript(
    tmp_path: Path, agent_bin: Callable[[str], Path]
) -> None:
    binary = agent_bin(AGENT)
    path = await record("claude-code", "tool-write", tmp_path, binary=str(binary))
    assert path == tmp_path / "claude" / "2.1.197" / "tool-write.jsonl"
    meta = json.loads(path.with_suffix(".meta.json").read_text())
    assert meta["version"] == "2.1.197" and meta["scenario"] == "tool-write"
    assert meta["model_requests"] >= 2
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert {entry["dir"] for entry in lines} == {"in", "out", "exit"}
    assert lines[0]["line"]["request"]["subtype"] == "initialize"
    assert any(e["dir"] == "out" and e["line"]["type"] == "result" for e in lines)


def test_corral_run_streams_json_and_denies_without_a_terminal(env: Env) -> None:
    env.server.set_scenario(SCENARIOS_SHELL)
    proc = cases.run_cli(env, "Run the command.", "--json")
    assert proc.returncode == 0, proc.stderr
    events = [e["event"] for e in envelopes(proc.stdout)]
    types = [e["type"] for e in events]
    assert types[0] == "session.started" and types[-1] == "session.ended"
    assert "approval.requested" in types
    resolved = next(e for e in events if e["type"] == "approval.resolved")
    assert resolved["decision"] == "deny"
    failed = next(e for e in events if e["type"] == "tool.failed")
    assert failed["denied"] is True
    assert not (env.repo / "ran.txt").exists()
    seqs = [e["seq"] for e in envelopes(proc.stdout)]
    assert seqs == list(range(1, len(seqs) + 1))


def test_corral_run_yes_allows_and_renders_for_humans(env: Env) -> None:
    env.server.set_scenario(SCENARIOS_SHELL)
    proc = cases.run_cli(env, "Run the command.", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert (env.repo / "ran.txt").read_text() == "corral\n"
    assert "DONE" in proc.stdout
    assert "echo corral > ran.txt" in proc.stderr  # the tool call, shown with its command


def test_corral_run_exit_code_reflects_a_failed_turn(env: Env) -> None:
    env.server.set_scenario(
        {"default": {"error": {"kind": "bad_request", "message": "no such model"}}}
    )
    proc = cases.run_cli(env, "Hello?", "--json")
    assert proc.returncode == 1, proc.stdout[-2000:]
    turn = next(
        e["event"] for e in envelopes(proc.stdout) if e["event"]["type"] == "turn.completed"
    )
    assert turn["stop_reason"] == "error"


SCENARIOS_SHELL = {
    "steps": [
        {
            "match": {"last_is_tool_result": False},
            "reply": {"tool_calls": [{"capability": "shell", "command": "echo corral > ran.txt"}]},
        },
        {"match": {"last_is_tool_result": True}, "reply": {"text": "DONE"}},
    ]
}
