"""aider-chat 0.86.2 through the plain driver (``aider-plain``: one ``aider --message`` process per
prompt) against the scripted model server.

The conformance suite: text, follow-up (the chat history file restored by the next process),
resume-after-exit, cancel-mid-turn and error-429 (aider retries) must pass; what aider cannot show is ``unsupported``. And
a cancel that lands while the model's answer is streaming (the suite's cancel may land during
aider's banner): the turn ends cancelled within 2 s and the next prompt is answered.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from corral.events import StopReason, TextDelta, TurnCompleted
from corral.testing import FakeModelServer
from corral.testing.conformance import run_conformance
from corral.testing.conformance._runner import make_workspace
from corral.testing.conformance._targets import SPECS, build_target
from corral.testing.conformance._types import Outcome

MUST_PASS = {"text", "follow-up", "resume-after-exit", "cancel-mid-turn", "error-429"}
UNSUPPORTED = {
    "tool-write",
    "tool-shell",
    "approval-allow",
    "approval-deny",
    "question",
    "input-during-turn",
    "image-input",
    "usage",
}
HELLO = "Hello from the scripted model."


@pytest.mark.realcli("aider")
@pytest.mark.timeout(900)
async def test_conformance_aider_plain(agent_bin: Callable[[str], Path]) -> None:
    agent_bin("aider")  # skip (fail under CI=true) when the pinned CLI is missing
    results = await run_conformance([build_target(SPECS["aider-plain"])])
    table = "\n".join(
        f"{r.scenario:18s} {r.outcome.value:12s} {r.seconds:5.1f}s {r.reason or ''}"
        for r in results
    )
    assert not [r for r in results if r.outcome is Outcome.FAIL], f"failures:\n{table}"
    passed = {r.scenario for r in results if r.outcome is Outcome.PASS}
    assert passed >= MUST_PASS, f"expected to pass: {MUST_PASS - passed}\n{table}"
    assert {r.scenario for r in results if r.declared} <= passed, table
    unsupported = {r.scenario for r in results if r.outcome is Outcome.UNSUPPORTED}
    assert unsupported == UNSUPPORTED, table


@pytest.mark.realcli("aider")
@pytest.mark.timeout(300)
async def test_aider_plain_cancel_while_the_answer_streams(
    agent_bin: Callable[[str], Path], tmp_path: Path
) -> None:
    agent_bin("aider")
    slow = {"text": "Once upon a time " * 60, "chunks": 60, "chunk_delay": 0.25}
    script = {
        "steps": [{"match": {"user_text_contains": "long story"}, "times": 1, "reply": slow}],
        "default": {"text": HELLO, "chunks": 4},
    }
    target = build_target(SPECS["aider-plain"])
    workspace = make_workspace(tmp_path)
    async with FakeModelServer(script) as server:
        adapter = target.make_adapter(
            base_url=server.base_url, home=workspace.home, cwd=workspace.repo
        )
        await adapter.start("s")
        stream = adapter.stream()
        await adapter.send("Tell me a long story.")
        seen = ""
        async with asyncio.timeout(180):
            while "Once upon a time Once upon" not in seen:
                event = await anext(stream)
                assert not isinstance(event, TurnCompleted), f"the turn ended early: {event}"
                if isinstance(event, TextDelta):
                    seen += event.text
        started = time.monotonic()
        await adapter.interrupt()
        async with asyncio.timeout(10):
            while not isinstance(event := await anext(stream), TurnCompleted):
                pass
        assert event.stop_reason is StopReason.CANCELLED
        assert time.monotonic() - started <= 2.0
        story = server.requests.main()[0]
        assert story.outcome != "complete", "the story was not cut short"
        await adapter.send("Say hello.")
        answer = ""
        async with asyncio.timeout(180):
            while not isinstance(event := await anext(stream), TurnCompleted):
                if isinstance(event, TextDelta):
                    answer += event.text
        assert event.stop_reason is StopReason.END_TURN
        assert HELLO in answer
        await adapter.stop()
