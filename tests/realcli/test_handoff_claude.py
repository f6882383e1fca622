"""Hand-off with the pinned Claude Code: a terminal session taken over by corral, and back.

Claude Code's TUI runs on a pseudo-terminal (a detached host: corral must see it as a person's
terminal, not as its own child) against the scripted model. corral links the session it finds in
Claude's store, mirrors it live, keeps its own prompt queued while the terminal runs, takes over
when the terminal exits — the scripted model's request log shows the queued prompt once, after
the terminal's turns — and "continue in terminal" gives a command that, run on a PTY, resumes the
same conversation (the model sees every earlier turn).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest
from _handoff_flow import asked, leave, type_prompt, until
from _pty_host import DetachedPty

from conftest import base_env
from corral.adapters.claude import ClaudeAdapter
from corral.events import StatusChanged, TextComplete
from corral.redirect import redirect_for
from corral.sessions import AdapterResolver, PromptState, SessionManager, SessionState
from corral.sessions._handoff import HandoffFlow
from corral.testing import FakeModelServer

pytestmark = [pytest.mark.realcli("claude"), pytest.mark.timeout(600)]

FIRST = "terminal turn one: remember the word heron"
SECOND = "terminal turn two: and the word kestrel"
QUEUED = "corral turn: queued while the terminal ran"
AFTER = "terminal turn three: after continue in terminal"


def _seed(home: Path, repo: Path) -> None:
    """The first-run dialogs answered, as a person has done once: onboarding, key, folder."""
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    (home / ".claude" / ".claude.json").write_text(
        json.dumps(
            {
                "hasCompletedOnboarding": True,
                "customApiKeyResponses": {"approved": ["test"], "rejected": []},
                "projects": {
                    str(repo): {
                        "hasTrustDialogAccepted": True,
                        "hasCompletedProjectOnboarding": True,
                    }
                },
            }
        )
    )


def _redirected(binary: Path, env: dict[str, str]) -> type[ClaudeAdapter]:
    class RedirectedClaude(ClaudeAdapter):
        provides_models = ClaudeAdapter.provides_models
        provides_usage = ClaudeAdapter.provides_usage
        store_env: ClassVar[dict[str, str]] = env
        terminal_binary: ClassVar[str] = str(binary)

        def __init__(self, **offered: Any) -> None:
            super().__init__(binary=str(binary), env=dict(env), **offered)

    return RedirectedClaude


async def test_claude_terminal_session_taken_over_and_continued_in_terminal(
    tmp_path: Path, isolated_home: Path, git_repo: Path, agent_bin: Callable[[str], Path]
) -> None:
    binary = agent_bin("claude")
    script = {"default": {"text": "ok: $user_text"}}
    async with FakeModelServer(script) as server:
        red = redirect_for(
            "claude", base_url=server.base_url, model="fake-model", api_key="test",
            home=isolated_home,
        )  # fmt: skip
        red.apply()
        _seed(isolated_home, git_repo)
        env = red.environ({**base_env(), "TERM": "xterm-256color"})
        cls = _redirected(binary, dict(red.env))
        argv = [str(binary), "--permission-mode", "acceptEdits"]
        tty = DetachedPty([*argv, FIRST], env=env, cwd=git_repo, ctrl=tmp_path / "tty1")
        try:
            await until(lambda: bool(asked(server, FIRST)), 120, "the terminal's first turn", tty)
            entries: list[Any] = []

            def found() -> bool:
                entries[:] = [
                    e for e in cls.scan_external_sessions(env=env) if e.cwd == str(git_repo)
                ]
                return bool(entries)

            await until(found, 60, "the session in Claude's store", tty)
            (entry,) = entries
            assert cls.is_cwd_externally_owned(str(git_repo), entry.sid)

            resolver = AdapterResolver({"claude-code": cls}, use_env=False, use_entry_points=False)
            mgr = SessionManager(tmp_path / "corral.db", resolver=resolver)
            async with mgr, HandoffFlow(mgr, poll=0.3) as flow:
                sid = (await flow.link("claude-code", entry.sid)).session_id
                assert mgr.get_session(sid).state == SessionState.DETACHED

                def mirrored_prompts() -> list[str]:
                    return [
                        str((e.event.raw or {}).get("text"))
                        for e in mgr.events(sid)
                        if e.source == "terminal"
                        and isinstance(e.event, StatusChanged)
                        and e.event.status == "prompt.external"
                    ]

                await until(lambda: FIRST in mirrored_prompts(), 30, "the mirrored history")
                # Claude writes the reply to its store after the prompt, so the mirror can hold
                # the prompt a poll before the reply: wait for it, within a bound.
                await until(
                    lambda: any(
                        isinstance(e.event, TextComplete) and e.source == "terminal"
                        for e in mgr.events(sid)
                    ),
                    30,
                    "the mirrored reply",
                )
                await type_prompt(tty, SECOND)
                await until(lambda: SECOND in mirrored_prompts(), 120, "the live mirror", tty)

                prompt = mgr.send(sid, QUEUED)
                await asyncio.sleep(5)  # the terminal is alive: corral must not write
                assert mgr.queue.get(prompt.id).state == PromptState.QUEUED
                assert not asked(server, QUEUED)
                assert not mgr.is_running(sid)

                await leave(tty)
                await until(
                    lambda: mgr.queue.get(prompt.id).state == PromptState.DELIVERED, 120, "delivery"
                )
                await until(lambda: bool(asked(server, QUEUED)), 120, "the queued prompt's request")
                await until(lambda: mgr.get_session(sid).state == SessionState.IDLE, 120, "idle")
                (queued_at,) = asked(server, QUEUED)  # exactly once
                assert queued_at > max(asked(server, SECOND)) > max(asked(server, FIRST))
                seen = server.requests.main()[queued_at].user_texts
                assert any(FIRST in t for t in seen) and any(SECOND in t for t in seen), seen

                release = await flow.continue_in_terminal(sid)
                assert not mgr.is_running(sid)
                assert mgr.get_session(sid).state == SessionState.DETACHED
                assert release.command[1:] == ["--resume", mgr.get_session(sid).agent_session_id]
                assert release.cwd == str(git_repo)

                resumed = DetachedPty(
                    [*release.command, "--permission-mode", "acceptEdits"],
                    env=env,
                    cwd=Path(release.cwd),
                    ctrl=tmp_path / "tty2",
                )
                try:
                    await asyncio.sleep(5)
                    await type_prompt(resumed, AFTER)
                    await until(
                        lambda: bool(asked(server, AFTER)), 120, "the resumed turn", resumed
                    )
                    (after_at,) = asked(server, AFTER)
                    history = server.requests.main()[after_at].user_texts
                    for earlier in (FIRST, SECOND, QUEUED):
                        assert any(earlier in t for t in history), (earlier, history)
                    later = mgr.send(sid, "corral again after the second terminal")
                    await asyncio.sleep(3)
                    assert mgr.queue.get(later.id).state == PromptState.QUEUED
                    await leave(resumed)
                    await until(
                        lambda: mgr.queue.get(later.id).state == PromptState.DELIVERED,
                        120,
                        "delivery after the second terminal",
                    )
                finally:
                    resumed.kill()
                await mgr.kill(sid)
        finally:
            tty.kill()
