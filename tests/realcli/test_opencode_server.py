"""The OpenCode server driver beyond the conformance suite, on one real ``opencode serve``
(1.18.33): models, status, fork, switching the permission mode mid-session, "always" approvals."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from corral.adapters._opencode_attach import find_record
from corral.adapters.opencode import OpenCodeAdapter
from corral.events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    EndReason,
    SessionEnded,
    ToolCallCompleted,
    TurnCompleted,
)
from corral.redirect import redirect_for
from corral.testing import FakeModelServer


@pytest.mark.realcli("opencode")
@pytest.mark.timeout(180)
async def test_opencode_server_session_operations(
    agent_bin: Callable[[str], Path],
    clean_env: dict[str, str],
    isolated_home: Path,
    git_repo: Path,
    tmp_path: Path,
) -> None:
    binary = agent_bin("opencode")
    script = {
        "steps": [
            {
                "match": {"user_text_contains": "RUN", "last_is_tool_result": False},
                "reply": {"tool_calls": [{"capability": "shell", "command": "printf x > ran.txt"}]},
            }
        ],
        "default": {"text": "Hello.", "chunks": 2},
    }
    async with FakeModelServer(script) as model:
        red = redirect_for(
            "opencode", base_url=model.base_url, model="fake-model", api_key="t", home=isolated_home
        )
        red.apply()
        ids: list[str] = []
        adapter = OpenCodeAdapter(
            cwd=str(git_repo),
            model="fake-model",
            binary=str(binary),
            env=dict(red.env),
            base_env=clean_env,
            on_session_id=ids.append,
            attach_root=tmp_path / "corral",
        )
        await adapter.start("ops")
        events = adapter.stream()

        async def turn(text: str) -> list:
            await adapter.send(text)
            seen = []
            async for event in events:
                seen.append(event)
                if isinstance(event, ApprovalRequested):
                    await adapter.respond_approval(event.request_id, ApprovalDecision.ALLOW_ALWAYS)
                if isinstance(event, TurnCompleted):
                    return seen
            return seen

        try:
            assert "corral/fake-model" in await adapter.list_models()
            await turn("Remember the word walnut.")
            status = await adapter.query_status()
            assert status["alive"] and not status["busy"] and status["agent_session_id"] == ids[0]

            forked = await adapter.fork()
            assert forked != ids[0] and ids[-1] == forked
            assert find_record("ops", tmp_path / "corral").agent_session_id == forked
            await turn("Which word did I ask you to remember?")
            assert "walnut" in json.dumps(model.requests.main().last().body)

            # default config allows tools: no approval asked
            first = await turn("RUN it.")
            assert not [e for e in first if isinstance(e, ApprovalRequested)]
            assert (git_repo / "ran.txt").is_file()
            (git_repo / "ran.txt").unlink()

            await adapter.set_permission_mode("ask")
            asked = await turn("RUN it again.")
            approvals = [e for e in asked if isinstance(e, ApprovalRequested)]
            assert approvals and approvals[0].cmd == "printf x > ran.txt"
            resolved = [e for e in asked if isinstance(e, ApprovalResolved)]
            assert resolved[0].decision is ApprovalDecision.ALLOW_ALWAYS
            assert [e for e in asked if isinstance(e, ToolCallCompleted)]
            assert (git_repo / "ran.txt").is_file()

            # the server dying is the end of the session, reported as a failure
            assert adapter.server is not None and adapter.server.pid is not None
            os.killpg(adapter.server.pid, signal.SIGKILL)
            async with asyncio.timeout(30):
                async for event in events:
                    if isinstance(event, SessionEnded):
                        assert event.reason is EndReason.FAILED and event.exit_code == -9
                        break
        finally:
            await adapter.stop()
        assert adapter.server is not None and adapter.server.returncode is not None
        assert not list((tmp_path / "corral" / "attach").glob("*.json"))
