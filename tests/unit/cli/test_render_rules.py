"""The terminal views' rendering rules (shared by ``corral run``, ``sessions show|tail``, ``chat``)."""

from __future__ import annotations

from datetime import UTC, datetime
from io import StringIO

from rich.console import Console

from corral.cli._run_render import HumanRenderer, PlainRenderer
from corral.events import (
    AgentInfo,
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    Envelope,
    Event,
    FileDiff,
    SessionStarted,
    StatusChanged,
    TextComplete,
    TextDelta,
    ToolCallCompleted,
    ToolCallStarted,
    ToolKind,
    ToolResult,
    TurnCompleted,
    UnknownEvent,
    Usage,
)


def _prompt(state: str, pid: str = "p1", text: str = "fix the tests") -> StatusChanged:
    raw = {"prompt_id": pid, "state": state, "version": 1, "text": text, "error": None}
    return StatusChanged(status=f"prompt.{state}", message=pid, raw=raw)


TURN: list[Event] = [
    SessionStarted(agent=AgentInfo(agent_id="x", name="Agent", version="1.2")),
    SessionStarted(agent=AgentInfo(agent_id="x", name="Agent", version="1.2")),
    _prompt("queued"),
    _prompt("sending"),
    _prompt("delivered"),
    StatusChanged(status="busy"),
    UnknownEvent(raw={"type": "mystery"}, vendor_type="mystery"),
    TextDelta(text="Looking", message_id="m1"),
    TextDelta(text=" now.", message_id="m1"),
    TextComplete(text="Looking now.", message_id="m1"),
    ToolCallStarted(
        call_id="c1", name="Bash", kind=ToolKind.COMMAND, cmd="pytest", input={"command": "pytest"}
    ),
    ApprovalRequested(request_id="r1", tool_name="Bash", cmd="pytest"),
    ApprovalResolved(request_id="r1", decision=ApprovalDecision.ALLOW),
    ToolCallCompleted(call_id="c1", result=ToolResult(output="ok")),
    FileDiff(path="a.py", diff="--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y\n"),
    Usage(input_tokens=10, output_tokens=5, cost_usd=0.001),
    TurnCompleted(),
]


def _envelopes(events: list[Event]) -> list[Envelope]:
    now = datetime.now(UTC)
    return [
        Envelope(session_id="s", seq=i + 1, ts=now, source="x", event=e)
        for i, e in enumerate(events)
    ]


def test_plain_rules_show_a_prompt_once_and_skip_what_has_nothing_to_show() -> None:
    renderer = PlainRenderer()
    parts = [renderer.render(env) for env in _envelopes(TURN)]
    text = "".join(p for p in parts if p)
    assert text == (
        "· Agent 1.2 · .\n"
        "› fix the tests\n"
        "Looking now.\n"
        "⏺ Bash: pytest\n"
        "? permission: Bash: pytest\n"
        "  → allow\n"
        "  ✓ Bash: pytest\n"
        "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y\n"
        "— turn finished · in 10 · out 5 · $0.0010\n"
    )
    # queued, delivered, busy, the unknown payload and the repeated start draw nothing at all
    assert parts[1] is None and parts[2] is None and parts[4] is None
    assert parts[5] is None and parts[6] is None
    assert "[" not in text


def test_warnings_and_errors_are_one_line_each() -> None:
    from corral.events import EVENT_TAGS

    renderer = PlainRenderer()
    events = [EVENT_TAGS["warning"](message="slow down"), EVENT_TAGS["error"](message="boom")]
    texts = [renderer.render(e) for e in _envelopes(events)]  # type: ignore[arg-type]
    assert texts == ["warning: slow down\n", "error: boom\n"]


def test_undelivered_prompts_carry_the_seed_wording() -> None:
    renderer = PlainRenderer()
    events = [_prompt("queued", "p2", "later"), _prompt("canceled", "p2", "later")]
    events += [_prompt("sending", "p3", "maybe"), _prompt("indeterminate", "p3", "maybe")]
    text = "".join(filter(None, (renderer.render(e) for e in _envelopes(events))))
    assert "'later' canceled: never sent" in text
    assert "never replayed automatically" in text and "duplicate" in text


def test_human_renderer_follows_the_same_rules() -> None:
    out, err = StringIO(), StringIO()
    renderer = HumanRenderer(
        out=Console(file=out, width=200, color_system=None),
        err=Console(file=err, width=200, color_system=None),
    )
    for env in _envelopes(TURN):
        renderer.show(env)
    assert out.getvalue() == "› fix the tests\nLooking now.\n"
    assert "⏺ Bash: pytest" in err.getvalue()
    assert "— turn finished · in 10 · out 5 · $0.0010" in err.getvalue()
