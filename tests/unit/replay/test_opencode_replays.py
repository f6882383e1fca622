"""The OpenCode server driver over recorded ``opencode serve`` exchanges, through ``HttpRecording``.

The real driver runs — readiness probes, the session, the ``/event`` stream, approval replies, the
abort ladder and the classification of how the session ended — on what the real server (1.18.33,
``corral record opencode …``) answered and streamed, and every request the driver makes is checked
against the one it made when the recording was made.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from corral.adapters.opencode import OpenCodeAdapter
from corral.events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    EndReason,
    Event,
    SessionEnded,
    SessionStarted,
    StopReason,
    TextDelta,
    TurnCompleted,
    Usage,
)
from corral.protocols.opencode_sse import OpenCodeSseParser
from corral.testing import HttpRecording, ReplayDivergence

from ._harness import ROOT, Action, _texts, replay_session

V = "opencode/1.18.33"
FIXTURES_USED = [
    f"{V}/{name}.jsonl" for name in ("text", "approval-allow", "approval-deny", "cancel-mid-turn")
]


def parser_replay(rel: str, parser: OpenCodeSseParser) -> list[Event]:
    """The recording fed straight to the parser: events to ``feed``, exchanges to ``feed_sent``."""
    events: list[Event] = []
    for entry in HttpRecording.load(ROOT / rel).segments[0]:
        if entry["dir"] == "exit":
            events += parser.finish()
        elif entry["dir"] == "out" and "line" in entry:
            events += parser.feed(entry["line"])
        elif entry["dir"] == "in" and "status" in entry["line"]:
            events += parser.feed_sent(entry["line"])
    return events


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def opencode_action(line: Any) -> Action:
    """What the user did for a recorded request: a prompt, an abort, an approval answer."""
    msg = _d(line)
    method, path = msg.get("method"), str(msg.get("path", ""))
    if method == "POST" and path.endswith("/prompt_async"):
        return ("prompt", _texts(_d(msg.get("body")).get("parts")))
    if method == "POST" and path.endswith("/abort"):
        return ("interrupt", None)
    if method == "POST" and path.startswith("/permission/"):
        return ("answer", _d(msg.get("body")).get("reply"))
    return None


def make(tmp_path: Path) -> OpenCodeAdapter:
    work = tmp_path / "repo"
    work.mkdir(exist_ok=True)
    adapter = OpenCodeAdapter(
        cwd=str(work),
        model="fake-model",
        binary="opencode",
        attach_root=tmp_path / "corral",
        base_env={},
    )
    adapter.ready_interval = 0.0  # the recorded probes answer at once: no need to pace them
    return adapter


async def run(
    name: str, tmp_path: Path, **options: Any
) -> tuple[list[Event], HttpRecording, OpenCodeAdapter]:
    recording = HttpRecording.load(ROOT / V / f"{name}.jsonl", **options)
    adapter = make(tmp_path)
    events = await replay_session(adapter, recording, opencode_action)
    return events, recording, adapter


def of(events: list[Event], kind: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def requests(recording: HttpRecording) -> list[tuple[str, str]]:
    return [(m["method"], m["path"]) for m in recording.transports[0].written]


# ── a plain turn; the session stopped by us ends completed ──


async def test_text_turn_and_a_stopped_session_ends_completed(tmp_path: Path) -> None:
    events, recording, adapter = await run("text", tmp_path)
    recording.check()
    assert isinstance(events[0], SessionStarted)
    assert events[0].agent.agent_session_id == adapter.parser.session_id
    assert "".join(e.text for e in of(events, TextDelta)) == "Hello from the scripted model."
    [turn] = of(events, TurnCompleted)
    assert turn.stop_reason is StopReason.END_TURN
    end = events[-1]
    assert isinstance(end, SessionEnded) and end.reason is EndReason.COMPLETED
    assert adapter.server is not None and adapter.server.killed_by_us
    # the driver made the readiness probes, opened the session and prompted, in that order
    made = requests(recording)
    assert made[-1] == ("POST", f"/session/{adapter.parser.session_id}/prompt_async")
    assert ("POST", "/session") in made
    assert made.index(("GET", "/global/health")) < made.index(("POST", "/session"))
    usage = of(events, Usage)
    totals = await adapter.get_usage()
    assert usage and totals.turns == len(usage)
    assert totals.output_tokens == sum(u.output_tokens or 0 for u in usage) > 0
    # the attach record went where it was told, and went away with the session
    assert not list((tmp_path / "corral" / "attach").glob("*.json"))


async def test_the_replayed_driver_makes_the_parser_calls_of_the_recording(tmp_path: Path) -> None:
    """Live and replay share one path: the driver's events are what the parser makes of the
    recorded exchanges and events, fed in recorded order."""
    events, recording, _ = await run("text", tmp_path)
    recording.check()
    direct = parser_replay(f"{V}/text.jsonl", OpenCodeSseParser())
    driven = [e for e in events if not isinstance(e, SessionStarted | SessionEnded)]
    assert [type(e).__name__ for e in driven] == [type(e).__name__ for e in direct]
    assert [getattr(e, "text", None) for e in driven] == [getattr(e, "text", None) for e in direct]


# ── approvals: the request reaches the user, the answer reaches the right permission ──


@pytest.mark.parametrize(
    ("name", "decision", "reply"),
    [
        ("approval-allow", ApprovalDecision.ALLOW, "once"),
        ("approval-deny", ApprovalDecision.DENY, "reject"),
    ],
)
async def test_approvals_are_routed_to_the_permission_reply(
    name: str, decision: ApprovalDecision, reply: str, tmp_path: Path
) -> None:
    events, recording, _ = await run(name, tmp_path)
    recording.check()
    [request] = of(events, ApprovalRequested)
    [resolved] = of(events, ApprovalResolved)
    assert resolved.request_id == request.request_id
    assert resolved.decision is decision
    answers = [m for m in recording.transports[0].written if m["path"].startswith("/permission/")]
    assert answers == [
        {
            "method": "POST",
            "path": f"/permission/{request.request_id}/reply",
            "body": {"reply": reply},
        }
    ]
    assert of(events, TurnCompleted)[-1].stop_reason is StopReason.END_TURN
    end = events[-1]
    assert isinstance(end, SessionEnded) and end.reason is EndReason.COMPLETED


async def test_a_different_answer_is_a_divergence(tmp_path: Path) -> None:
    def deny_instead(line: Any) -> Action:
        found = opencode_action(line)
        return ("answer", "reject") if found and found[0] == "answer" else found

    recording = HttpRecording.load(ROOT / V / "approval-allow.jsonl", wait=1.0)
    with pytest.raises(ReplayDivergence, match="reject"):
        await replay_session(make(tmp_path), recording, deny_instead)
    with pytest.raises(ReplayDivergence):
        recording.check()


# ── cancel: the abort goes out, the turn ends cancelled without climbing the ladder ──


async def test_cancel_mid_turn_sends_the_abort_and_ends_the_turn(tmp_path: Path) -> None:
    events, recording, adapter = await run("cancel-mid-turn", tmp_path)
    recording.check()
    sid = adapter.parser.session_id
    made = requests(recording)
    assert made.index(("POST", f"/session/{sid}/prompt_async")) < made.index(
        ("POST", f"/session/{sid}/abort")
    )
    [turn] = of(events, TurnCompleted)
    assert turn.stop_reason is StopReason.CANCELLED
    assert recording.transports[0].signals == []  # the abort was enough: no SIGINT
    end = events[-1]
    assert isinstance(end, SessionEnded) and end.reason is EndReason.COMPLETED


# ── the server dying mid-turn ends the session failed, with its exit code ──


def _cut_mid_turn(path: Path) -> list[dict[str, Any]]:
    """The recording up to three events after the prompt, then the server exits 1."""
    entries = HttpRecording.load(path).segments[0]
    out: list[dict[str, Any]] = []
    prompted, after = False, 0
    for entry in entries:
        if entry["dir"] == "exit":
            break
        out.append(dict(entry))
        if entry["dir"] == "in" and (opencode_action(entry.get("line")) or ("",))[0] == "prompt":
            prompted = True
        elif prompted and entry["dir"] == "out":
            after += 1
            if after == 3:
                break
    return [*out, {"dir": "exit", "code": 1}]


async def test_the_server_dying_mid_turn_ends_the_session_failed(tmp_path: Path) -> None:
    recording = HttpRecording(_cut_mid_turn(ROOT / V / "text.jsonl"))
    adapter = make(tmp_path)
    events = await replay_session(adapter, recording, opencode_action, stop=False)
    assert recording.problems == []
    assert recording.transports[0].consumed
    end = events[-1]
    assert isinstance(end, SessionEnded)
    assert end.reason is EndReason.FAILED and end.exit_code == 1
    assert end.message == "opencode serve exited"
    assert not of(events, TurnCompleted) or of(events, TurnCompleted)[-1].stop_reason in (
        StopReason.ERROR,
        StopReason.CANCELLED,
    )


# ── the live transport records in the order a replay needs ──


def test_an_event_during_a_request_is_tapped_after_it() -> None:
    from corral._process._server import _InOrder

    seen: list[tuple[str, bytes]] = []
    log = _InOrder(lambda direction, raw: seen.append((direction, raw)))
    abort = log.open()  # the abort goes out …
    log.add("out", b'{"type": "session.error"}')  # … the server's event arrives first …
    other = log.open()
    log.fill(other, {"method": "GET", "path": "/session/status", "status": 200})
    assert seen == []  # … and waits behind the request made before it
    log.fill(abort, {"method": "POST", "path": "/session/s/abort", "status": 200})
    log.add("exit", b"-15")
    assert [(d, json.loads(r).get("path", json.loads(r).get("type"))) for d, r in seen[:3]] == [
        ("in", "/session/s/abort"),
        ("out", "session.error"),
        ("in", "/session/status"),
    ]
    assert seen[3] == ("exit", b"-15")
