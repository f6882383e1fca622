"""The Pi RPC driver's commands beyond the conformance suite, on the pinned real Pi (0.73.1):
follow-up during a run, model and thinking level, new_session / switch_session, get_state."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from corral.adapters.pi import PiAdapter
from corral.events import EndReason, SessionEnded, TextDelta, TurnCompleted
from corral.redirect import redirect_for
from corral.testing import FakeModelServer

SLOW = {"text": "Once upon a time " * 10, "chunks": 10, "chunk_delay": 0.2}


@pytest.mark.realcli("pi")
@pytest.mark.timeout(120)
async def test_pi_rpc_commands(
    agent_bin: Callable[[str], Path],
    clean_env: dict[str, str],
    isolated_home: Path,
    git_repo: Path,
) -> None:
    binary = agent_bin("pi")
    script = {
        "steps": [{"match": {"turn": 1}, "times": 1, "reply": SLOW}],
        "default": {"text": "Hello.", "chunks": 2},
    }
    async with FakeModelServer(script) as model:
        red = redirect_for(
            "pi", base_url=model.base_url, model="fake-model", api_key="test", home=isolated_home
        )
        red.apply()
        ids: list[str] = []
        adapter = PiAdapter(
            cwd=str(git_repo),
            model="fake-model",
            binary=str(binary),
            env=dict(red.env),
            extra_args=list(red.argv),
            on_session_id=ids.append,
            base_env=clean_env,
        )
        await adapter.start("pi-rpc")
        events = adapter.stream()
        try:
            # follow_up while the run streams: answered after the first prompt, in the same run
            await adapter.send("Remember walnut and tell a story.")
            async for event in events:
                if isinstance(event, TextDelta):
                    break
            await adapter.follow_up("FOLLOW UP")
            async for event in events:
                if isinstance(event, TurnCompleted):
                    break
            assert [r.last_user_text for r in model.requests.main()] == [
                "Remember walnut and tell a story.",
                "FOLLOW UP",
            ]
            state = await adapter.get_state()
            assert state["isStreaming"] is False and state["pendingMessageCount"] == 0

            await adapter.set_model("corral/fake-model")
            assert await adapter.list_models() == ["corral/fake-model"]
            await adapter.set_thinking_level("high")
            # the redirected model declares no reasoning, so pi clamps the level
            assert (await adapter.get_state())["thinkingLevel"] == "off"
            with pytest.raises(ValueError):
                await adapter.set_thinking_level("extreme")

            first = ids[-1]
            assert first.endswith(".jsonl")
            fresh = await adapter.new_session()
            assert fresh is not None and fresh != first and ids[-1] == fresh
            await adapter.send("A fresh start.")
            async for event in events:
                if isinstance(event, TurnCompleted):
                    break
            assert "walnut" not in json.dumps(model.requests.main().last().body)

            assert await adapter.switch_session(first) == first
            await adapter.send("Which word did I ask you to remember?")
            async for event in events:
                if isinstance(event, TurnCompleted):
                    assert event.result_text == "Hello."
                    break
            assert "walnut" in json.dumps(model.requests.main().last().body)

            status = await adapter.query_status()
            assert status["alive"] and not status["busy"] and status["session_file"] == first

            # pi dying is the end of the session, reported as a failure
            assert adapter.transport is not None and adapter.transport.pid is not None
            os.killpg(adapter.transport.pid, signal.SIGKILL)
            async with asyncio.timeout(30):
                async for event in events:
                    if isinstance(event, SessionEnded):
                        assert event.reason is EndReason.FAILED and event.exit_code == -9
                        break
        finally:
            await adapter.stop()
