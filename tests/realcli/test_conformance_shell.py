"""The shell grade on real CLIs: aider (PyPI), Claude Code's TUI and Codex's TUI, each in a PTY.

Every suite scenario runs; ``text``, ``follow-up`` and ``cancel-mid-turn`` must pass, everything a
terminal cannot show must come out ``unsupported`` with its reason (never ``fail``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from _conformance_check import check_suite

from corral.events import StopReason
from corral.testing import FakeModelServer
from corral.testing.conformance import run_conformance
from corral.testing.conformance._runner import make_workspace
from corral.testing.conformance._scenarios import HELLO, scenario_names
from corral.testing.conformance._session import LiveSession
from corral.testing.conformance._targets import SPECS, build_target

MUST_PASS = {"text", "follow-up", "cancel-mid-turn"}


async def _conform(agent: str) -> None:
    results = await run_conformance([build_target(SPECS[agent])])
    check_suite(results, MUST_PASS, set(scenario_names()) - MUST_PASS)


@pytest.mark.realcli("aider")
@pytest.mark.timeout(600)
async def test_conformance_aider_shell(agent_bin: Callable[[str], Path]) -> None:
    agent_bin("aider")
    await _conform("aider-shell")


@pytest.mark.realcli("claude")
@pytest.mark.timeout(600)
async def test_conformance_claude_tui(agent_bin: Callable[[str], Path]) -> None:
    agent_bin("claude")
    await _conform("claude-tui")


@pytest.mark.realcli("codex")
@pytest.mark.timeout(600)
async def test_conformance_codex_tui(agent_bin: Callable[[str], Path]) -> None:
    agent_bin("codex")
    await _conform("codex-tui")


@pytest.mark.realcli
@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("agent", "cli"), [("aider-shell", "aider"), ("claude-tui", "claude"), ("codex-tui", "codex")]
)
async def test_the_turn_text_is_the_answer_and_nothing_else(
    agent: str, cli: str, agent_bin: Callable[[str], Path], tmp_path: Path
) -> None:
    """No echo, banner, spinner, status line or input box: the screen diff yields the model's
    words exactly, on both turns."""
    agent_bin(cli)
    target = build_target(SPECS[agent])
    async with FakeModelServer({"default": {"text": HELLO, "chunks": 4}}) as server:
        workspace = make_workspace(tmp_path)
        adapter = target.make_adapter(
            base_url=server.base_url, home=workspace.home, cwd=workspace.repo
        )
        async with LiveSession(adapter) as s:
            for prompt in ("Say hello.", "Say hello again."):
                await s.send(prompt)
                turn = await s.turn(target.turn_timeout)
                assert turn.end is not None and turn.end.stop_reason is StopReason.END_TURN
                assert turn.text == HELLO, (prompt, turn.text, adapter.parser.display())
