"""Real-CLI cases shared by the Claude Code and Qwen Code (stream-json) tests.

Each case is a small coroutine taking an adapter factory, so it can move into the conformance
suite as is. The factory builds an adapter pointed at a running scripted model server.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corral.adapters.base import BaseAdapter
from corral.events import (
    ApprovalDecision,
    ApprovalRequested,
    ReasoningDelta,
    StopReason,
    TextComplete,
    ToolCallCompleted,
    ToolCallStarted,
    ToolKind,
    TurnCompleted,
)
from corral.redirect import redirect_for
from corral.testing import FakeModelServer
from corral.testing.conformance import SCENARIOS, LiveSession

MODEL = "fake-model"
CORRAL = str(Path(sys.executable).with_name("corral"))


@dataclass
class Env:
    """A scripted server, an isolated home and a git repo, and how to build an adapter on them."""

    agent: str
    adapter_cls: type[BaseAdapter]
    binary: Path
    server: FakeModelServer
    home: Path
    repo: Path

    def redirection(self) -> tuple[dict[str, str], tuple[str, ...]]:
        red = redirect_for(
            self.agent, base_url=self.server.base_url, model=MODEL, api_key="test", home=self.home
        )
        red.apply()
        return dict(red.env), tuple(red.argv)

    def adapter(self, **init: Any) -> BaseAdapter:
        env, argv = self.redirection()
        init.setdefault("permission_mode", "default")
        return self.adapter_cls(  # type: ignore[call-arg]
            cwd=str(self.repo),
            binary=str(self.binary),
            model=MODEL,
            env=env,
            extra_args=argv,
            **init,
        )


AdapterFactory = Callable[..., BaseAdapter]


async def case_thinking(env: Env) -> None:
    env.server.set_scenario({"name": "thinking", **SCENARIOS["thinking"].script})
    d = LiveSession(env.adapter())
    await d.start()
    try:
        await d.prompt("Say hello.")
        turn = await d.turn()
    finally:
        await d.finish()
    assert turn.end is not None and turn.end.stop_reason is StopReason.END_TURN
    assert "".join(e.text for e in d.of_type(ReasoningDelta)) == "Let me think about this."


async def case_subagent(env: Env) -> None:
    env.server.set_scenario({"name": "subagent", **SCENARIOS["subagent"].script})
    d = LiveSession(env.adapter())
    await d.start()
    try:
        await d.prompt("Delegate a greeting.")
        await d.turn()
    finally:
        await d.finish()
    (call,) = [e for e in d.of_type(ToolCallStarted) if e.kind is ToolKind.SUBAGENT]
    nested = [e for e in d.of_type(TextComplete) if e.parent_call_id == call.call_id]
    assert [e.text for e in nested] == ["Hi from the sub-agent."]
    assert any(e.call_id == call.call_id for e in d.of_type(ToolCallCompleted))


async def case_allow_always(env: Env) -> None:
    """``allow_always`` adds a session rule: the same command later runs without asking again."""
    # Needs permission (not a read-only command) but writes no file: Claude Code checks a written
    # path separately from the command rule, and runs read-only commands like echo unasked.
    command = "python3 -c 'print(40+2)'"
    env.server.set_scenario(
        {
            "steps": [
                {
                    "match": {"last_is_tool_result": False},
                    "reply": {"tool_calls": [{"capability": "shell", "command": command}]},
                },
                {"match": {"last_is_tool_result": True}, "reply": {"text": "DONE"}},
            ]
        }
    )
    d = LiveSession(env.adapter(), approve=ApprovalDecision.ALLOW_ALWAYS)
    await d.start()
    try:
        await d.prompt("Run it once.")
        await d.turn()
        await d.prompt("Run it again.")
        await d.turn()
    finally:
        await d.finish()
    assert len(d.of_type(ApprovalRequested)) == 1
    # The command ran in both turns: a later model request carries both results.
    most = max(sum("42" in r for r in req.tool_results) for req in env.server.requests.main())
    assert most == 2


async def case_set_model_and_mode(env: Env) -> None:
    """Runtime switches: the next model request names the new model; acceptEdits skips approvals."""
    env.server.set_scenario({"name": "tool-write", **SCENARIOS["tool-write"].script})
    adapter = env.adapter()
    d = LiveSession(adapter)  # no approval policy: an approval request would stall the turn
    await d.start()
    try:
        await adapter.set_model("fake-model-2")
        await adapter.set_permission_mode("acceptEdits")
        await d.prompt("Create hello.txt containing hi.")
        turn = await d.turn(timeout=60)
    finally:
        await d.finish()
    assert turn.end is not None and turn.end.stop_reason is StopReason.END_TURN
    assert d.of_type(ApprovalRequested) == []
    assert (env.repo / "hello.txt").read_text() == "hi"
    models = {r.model for r in env.server.requests.main()}
    assert "fake-model-2" in models


def run_cli(env: Env, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``corral run`` in a subprocess, with the CLI's redirection in its environment."""
    red_env, argv = env.redirection()
    if argv:
        raise AssertionError("corral run has no way to pass extra CLI args; this agent needs them")
    full_env = {"PATH": "/usr/bin:/bin", **red_env}
    return subprocess.run(
        [CORRAL, "run", env.agent, *args, "--binary", str(env.binary), "--cwd", str(env.repo)],
        env=full_env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def envelopes(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def turn_of(events: list[Any]) -> TurnCompleted:
    return next(e for e in events if isinstance(e, TurnCompleted))


PDF_BYTES = (
    b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>"
    b"endobj 3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 10 10]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"
)


async def case_document(env: Env) -> None:
    """A PDF attachment reaches the model as a document block (``cap_documents``)."""
    from corral.adapters.base import Attachment

    env.server.set_scenario({"default": {"text": "A PDF."}})
    d = LiveSession(env.adapter())
    await d.start()
    try:
        await d.prompt(
            "What is this?",
            [Attachment(data=PDF_BYTES, media_type="application/pdf", name="x.pdf")],
        )
        turn = await d.turn()
    finally:
        await d.finish()
    assert turn.end is not None and turn.end.result_text == "A PDF."
    body = env.server.requests.main().last().body
    user = [m for m in body["messages"] if m.get("role") == "user"][-1]
    assert "document" in [block.get("type") for block in user["content"]]
