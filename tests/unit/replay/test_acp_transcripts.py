"""The ACP driver on recorded traffic of the real CLIs (``tests/fixtures/transcripts/<agent>/…``).

Fixtures are recorded by ``corral record AGENT SCENARIO`` and never written by hand. Every fixture
of the ACP agents is played into the real driver through ``ReplayTransport`` — the same parser
calls as a live session, the same handshake, permission routing and cancel — and one whose
scenario has no check fails.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from corral.adapters.base import BaseAdapter
from corral.adapters.copilot import CopilotAdapter
from corral.adapters.gemini import GeminiAdapter
from corral.adapters.hermes import HermesAdapter
from corral.adapters.kilo import KiloAdapter
from corral.adapters.opencode_acp import OpenCodeAcpAdapter
from corral.adapters.qwen_acp import QwenAcpAdapter
from corral.events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    Event,
    FileDiff,
    SessionStarted,
    StopReason,
    TextComplete,
    TextDelta,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallStarted,
    ToolKind,
    TurnCompleted,
    UnknownEvent,
    Usage,
)
from corral.testing import Recording

from ._harness import acp_action, replay_session

ROOT = Path(__file__).parents[2] / "fixtures" / "transcripts"
ADAPTERS: dict[str, Callable[..., BaseAdapter]] = {
    "gemini": lambda **kw: GeminiAdapter(binary="gemini", **kw),
    "qwen-acp": lambda **kw: QwenAcpAdapter(binary="qwen", **kw),
    "opencode-acp": lambda **kw: OpenCodeAcpAdapter(binary="opencode", **kw),
    "hermes": lambda **kw: HermesAdapter(binary="hermes", **kw),
    "kilo": lambda **kw: KiloAdapter(binary="kilo", **kw),
    "copilot": lambda **kw: CopilotAdapter(binary="copilot", **kw),
}
AGENTS = ("gemini", "qwen-acp", "opencode-acp", "hermes", "kilo", "copilot")
HELLO = "Hello from the scripted model."
ALSO_UNKNOWN = {"copilot": {"config_option_update"}}
FIXTURES_USED = [
    "copilot/1.0.102/approval-deny.jsonl",
    "copilot/1.0.102/resume-after-exit.jsonl",
    "copilot/1.0.102/text.jsonl",
    "copilot/1.0.102/tool-write.jsonl",
    "gemini/0.61.0/approval-allow.jsonl",
    "gemini/0.61.0/approval-deny.jsonl",
    "gemini/0.61.0/cancel-mid-turn.jsonl",
    "gemini/0.61.0/image-input.jsonl",
    "gemini/0.61.0/text.jsonl",
    "gemini/0.61.0/tool-write.jsonl",
    "hermes/0.19.0/approval-allow.jsonl",
    "hermes/0.19.0/approval-deny.jsonl",
    "hermes/0.19.0/cancel-mid-turn.jsonl",
    "hermes/0.19.0/resume-after-exit.jsonl",
    "hermes/0.19.0/text.jsonl",
    "hermes/0.19.0/tool-write.jsonl",
    "kilo/7.7.7/approval-deny.jsonl",
    "kilo/7.7.7/resume-after-exit.jsonl",
    "kilo/7.7.7/text.jsonl",
    "kilo/7.7.7/tool-write.jsonl",
    "opencode-acp/1.18.33/approval-allow.jsonl",
    "opencode-acp/1.18.33/approval-deny.jsonl",
    "opencode-acp/1.18.33/cancel-mid-turn.jsonl",
    "opencode-acp/1.18.33/resume-after-exit.jsonl",
    "opencode-acp/1.18.33/text.jsonl",
    "opencode-acp/1.18.33/tool-write.jsonl",
    "qwen-acp/0.15.10/approval-allow.jsonl",
    "qwen-acp/0.15.10/approval-deny.jsonl",
    "qwen-acp/0.15.10/cancel-mid-turn.jsonl",
    "qwen-acp/0.15.10/resume-after-exit.jsonl",
    "qwen-acp/0.15.10/text.jsonl",
    "qwen-acp/0.15.10/tool-write.jsonl",
]
"""Declared for the fixture-usage meta-test; must equal what is on disk (checked below)."""
FIXTURES = sorted(p for agent in AGENTS for p in (ROOT / agent).glob("*/*.jsonl"))


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def of(events: list[Event], cls: type) -> list[Any]:
    return [e for e in events if isinstance(e, cls)]


def ends(events: list[Event]) -> list[StopReason]:
    return [e.stop_reason for e in of(events, TurnCompleted)]


def sent_methods(entries: list[dict[str, Any]]) -> list[str]:
    return [e["line"].get("method") for e in entries if e["dir"] == "in" and "line" in e]


def check_text(events: list[Event], entries: list[dict[str, Any]]) -> None:
    assert ends(events) == [StopReason.END_TURN]
    assert "".join(e.text for e in of(events, TextDelta)) == HELLO
    assert [e.text for e in of(events, TextComplete)] == [HELLO]


def check_tool_write(events: list[Event], entries: list[dict[str, Any]]) -> None:
    assert ends(events) == [StopReason.END_TURN]
    edits = [e for e in of(events, ToolCallStarted) if e.kind is ToolKind.EDIT]
    assert edits, "no edit tool call"
    done = {e.call_id for e in of(events, ToolCallCompleted)}
    assert edits[0].call_id in done
    diffs = [d for d in of(events, FileDiff) if d.path.endswith("hello.txt")]
    assert diffs and diffs[0].new_text == "hi"


def _approval(events: list[Event], decision: ApprovalDecision) -> ApprovalRequested:
    asked = of(events, ApprovalRequested)
    assert len(asked) == 1
    request = asked[0]
    assert request.options and all(o.id for o in request.options)
    assert decision in {o.decision for o in request.options}
    resolved = of(events, ApprovalResolved)
    assert [r.decision for r in resolved] == [decision]
    chosen = next(o for o in request.options if o.id == resolved[0].option_id)
    assert chosen.decision is decision
    return request


def check_approval_allow(events: list[Event], entries: list[dict[str, Any]]) -> None:
    request = _approval(events, ApprovalDecision.ALLOW)
    assert request.call_id in {e.call_id for e in of(events, ToolCallCompleted)}
    assert ends(events) == [StopReason.END_TURN]


def check_approval_deny(events: list[Event], entries: list[dict[str, Any]]) -> None:
    request = _approval(events, ApprovalDecision.DENY)
    failed = [f for f in of(events, ToolCallFailed) if f.call_id == request.call_id]
    assert failed and failed[0].denied
    assert request.call_id not in {e.call_id for e in of(events, ToolCallCompleted)}


def check_cancel(events: list[Event], entries: list[dict[str, Any]]) -> None:
    assert ends(events) == [StopReason.CANCELLED, StopReason.END_TURN]
    assert "session/cancel" in sent_methods(entries)
    assert of(events, TextComplete)[-1].text == HELLO


def check_resume(events: list[Event], entries: list[dict[str, Any]]) -> None:
    assert [e["dir"] for e in entries].count("exit") == 2
    methods = sent_methods(entries)
    assert methods.count("session/new") == 1
    assert "session/load" in methods or "session/resume" in methods
    assert ends(events) == [StopReason.END_TURN, StopReason.END_TURN]


def check_image(events: list[Event], entries: list[dict[str, Any]]) -> None:
    prompts = [
        e["line"]
        for e in entries
        if e["dir"] == "in" and e.get("line", {}).get("method") == "session/prompt"
    ]
    blocks = prompts[0]["params"]["prompt"]
    assert [b["type"] for b in blocks] == ["text", "image"]
    assert blocks[1]["mimeType"] == "image/png"
    assert ends(events) == [StopReason.END_TURN]


CHECKS: dict[str, Callable[[list[Event], list[dict[str, Any]]], None]] = {
    "text": check_text,
    "tool-write": check_tool_write,
    "approval-allow": check_approval_allow,
    "approval-deny": check_approval_deny,
    "cancel-mid-turn": check_cancel,
    "resume-after-exit": check_resume,
    "image-input": check_image,
}


def test_fixtures_exist_for_every_acp_agent() -> None:
    for agent in AGENTS:
        assert list((ROOT / agent).glob("*/*.jsonl")), f"no recorded fixture for {agent}"


def recorded_cwd(entries: list[dict[str, Any]]) -> Path | None:
    """The project directory of the recorded session (the agent's file requests name paths in it)."""
    for e in entries:
        line = e.get("line")
        if e["dir"] == "in" and isinstance(line, dict) and line.get("method") == "session/new":
            return Path(line["params"]["cwd"])
    return None


async def drive(path: Path, tmp_path: Path) -> list[Event]:
    """Every process of the recording through a real driver; a later one resumes the session."""
    make = ADAPTERS[path.parts[-3]]
    cwd = recorded_cwd(load(path))
    if cwd is None or cwd.exists():
        return await _drive(path, make, tmp_path)
    created = cwd
    while not created.parent.exists():
        created = created.parent
    cwd.mkdir(parents=True)
    try:
        return await _drive(path, make, cwd)
    finally:
        shutil.rmtree(created, ignore_errors=True)


async def _drive(path: Path, make: Callable[..., BaseAdapter], cwd: Path) -> list[Event]:
    events: list[Event] = []
    resume: str | None = None
    for segment in Recording.load(path).segments:
        recording = Recording(segment)
        adapter = make(cwd=str(cwd), resume_session_id=resume)
        events += await replay_session(adapter, recording, acp_action)
        recording.check()
        started = of(events, SessionStarted)
        resume = started[-1].agent.agent_session_id if started else None
    return events


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parts[-3]}/{p.stem}")
async def test_replay(path: Path, tmp_path: Path) -> None:
    meta = json.loads(path.with_suffix(".meta.json").read_text())
    assert meta["scenario"] == path.stem and meta["version"] == path.parent.name
    check = CHECKS.get(path.stem)
    assert check is not None, f"fixture {path} has no check: every fixture must be used"
    entries = load(path)
    events = await drive(path, tmp_path)
    check(events, entries)
    # Each of the four reports tokens for every turn it finishes normally.
    assert len(of(events, Usage)) >= ends(events).count(StopReason.END_TURN)
    # Nothing the agent sends in these runs is unknown, except replayed user chunks on load (and
    # Copilot's session config options, which corral does not surface: kept as UnknownEvent).
    unknown = {e.vendor_type for e in of(events, UnknownEvent)}
    assert unknown <= {"user_message_chunk"} | ALSO_UNKNOWN.get(path.parts[-3], set()), unknown


def test_declared_fixtures_match_the_recordings_on_disk() -> None:
    assert sorted(str(p.relative_to(ROOT)) for p in FIXTURES) == FIXTURES_USED
