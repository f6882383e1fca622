"""The durable prompt queue driving the pinned real Claude Code.

The scripted model server's request log is the ground truth of what the provider received: each
queued prompt must reach it exactly once, in order, and every prompt must end ``delivered``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from corral.adapters.claude import ClaudeAdapter
from corral.events import TurnCompleted
from corral.redirect import redirect_for
from corral.sessions import PromptState, SessionManager, SessionSpec
from corral.sessions._resolve import AdapterResolver
from corral.testing import FakeModelServer

pytestmark = [pytest.mark.realcli("claude"), pytest.mark.timeout(240)]

PROMPTS = ["first: alpha", "second: bravo", "third: charlie", "fourth: delta"]


def _redirected_claude(server: FakeModelServer, home: Path, binary: Path) -> type[ClaudeAdapter]:
    red = redirect_for(
        "claude", base_url=server.base_url, model="fake-model", api_key="test", home=home
    )
    red.apply()

    class RedirectedClaude(ClaudeAdapter):
        provides_models = ClaudeAdapter.provides_models
        provides_usage = ClaudeAdapter.provides_usage

        def __init__(self, **offered: Any) -> None:
            super().__init__(
                binary=str(binary), env=dict(red.env), extra_args=list(red.argv), **offered
            )

    return RedirectedClaude


async def test_queued_prompts_reach_the_provider_once_each_in_order(
    tmp_path: Path,
    isolated_home: Path,
    git_repo: Path,
    agent_bin: Callable[[str], Path],
) -> None:
    # The first turn streams slowly, so the other prompts are queued while it runs.
    script = {
        "steps": [
            {
                "match": {"turn": 1},
                "times": 1,
                "reply": {"text": "Working on it slowly.", "chunks": 10, "chunk_delay": 0.15},
            }
        ],
        "default": {"text": "ok: $user_text"},
    }
    async with FakeModelServer(script) as server:
        cls = _redirected_claude(server, isolated_home, agent_bin("claude"))
        resolver = AdapterResolver({"claude-code": cls}, use_env=False, use_entry_points=False)
        async with SessionManager(tmp_path / "corral.db", resolver=resolver) as mgr:
            sid = (
                await mgr.create_session(SessionSpec(adapter_id="claude-code", cwd=str(git_repo)))
            ).id
            records = [mgr.send(sid, text) for text in PROMPTS]
            assert [r.state for r in records[1:]] == [PromptState.QUEUED] * 3

            async def turns_done() -> None:
                done = 0
                async for env in mgr.subscribe(sid):
                    if isinstance(env.event, TurnCompleted):
                        done += 1
                        if done == len(PROMPTS):
                            return

            await asyncio.wait_for(turns_done(), 180)
            states = [p.state for p in mgr.prompts(sid)]
            seqs = [e.seq for e in mgr.events(sid)]
            await mgr.kill(sid)

    assert states == [PromptState.DELIVERED] * len(PROMPTS)
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    received = [r.last_user_text for r in server.requests.main()]
    for text in PROMPTS:
        assert sum(text in r for r in received) == 1, (text, received)
    order = [next(i for i, r in enumerate(received) if text in r) for text in PROMPTS]
    assert order == sorted(order), received
