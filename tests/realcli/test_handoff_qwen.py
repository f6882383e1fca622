"""Hand-off with an ACP agent, the pinned Qwen Code: its TUI's session taken over by corral
over ACP (``qwen-acp``, ``session/load``), and back.

As for Claude Code (test_handoff_claude.py): Qwen's TUI runs on a detached PTY against the
scripted model (set up the way a person would, in ``~/.qwen/settings.json``); corral links the
chat it finds, mirrors it, keeps its prompt queued while the TUI runs, takes over when it exits
(the prompt reaches the model once, after the terminal's turns, with them in its input), and
``qwen --resume <id>`` from "continue in terminal" carries the whole conversation on.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest
from _handoff_flow import asked, kill_leftovers, leave, submit, type_prompt, until
from _pty_host import DetachedPty

from conftest import base_env
from corral.adapters.qwen_acp import QwenAcpAdapter
from corral.events import StatusChanged
from corral.redirect import redirect_for
from corral.sessions import AdapterResolver, PromptState, SessionManager, SessionState
from corral.sessions._handoff import HandoffFlow
from corral.testing import FakeModelServer

pytestmark = [pytest.mark.realcli("qwen"), pytest.mark.timeout(600)]

FIRST = "terminal turn one: remember the word heron"
SECOND = "terminal turn two: and the word kestrel"
QUEUED = "corral turn: queued while the terminal ran"
AFTER = "terminal turn three: after continue in terminal"


def _settings(home: Path) -> None:
    """A person's Qwen Code set up for the provider: the auth type chosen once, in settings."""
    path = home / ".qwen" / "settings.json"
    settings = json.loads(path.read_text())
    settings["security"] = {"auth": {"selectedType": "openai"}}
    path.write_text(json.dumps(settings))


def _redirected(binary: Path, env: dict[str, str]) -> type[QwenAcpAdapter]:
    class RedirectedQwen(QwenAcpAdapter):
        provides_models = QwenAcpAdapter.provides_models
        provides_usage = QwenAcpAdapter.provides_usage
        store_env: ClassVar[dict[str, str]] = env
        terminal_binary: ClassVar[str] = str(binary)

        def __init__(self, **offered: Any) -> None:
            super().__init__(binary=str(binary), env=dict(env), **offered)

    return RedirectedQwen


async def test_qwen_terminal_session_taken_over_over_acp_and_continued_in_terminal(
    tmp_path: Path, isolated_home: Path, git_repo: Path, agent_bin: Callable[[str], Path]
) -> None:
    binary = agent_bin("qwen")
    async with FakeModelServer({"default": {"text": "ok: $user_text"}}) as server:
        red = redirect_for(
            "qwen", base_url=server.base_url, model="fake-model", api_key="test",
            home=isolated_home,
        )  # fmt: skip
        red.apply()
        _settings(isolated_home)
        env = red.environ({**base_env(), "TERM": "xterm-256color"})
        cls = _redirected(binary, dict(red.env))
        tty = DetachedPty([str(binary), "-i", FIRST], env=env, cwd=git_repo, ctrl=tmp_path / "tty1")
        try:
            await until(lambda: bool(asked(server, FIRST)), 120, "the terminal's first turn", tty)
            entries: list[Any] = []

            def found() -> bool:
                entries[:] = [
                    e for e in cls.scan_external_sessions(env=env) if e.cwd == str(git_repo)
                ]
                return bool(entries)

            await until(found, 60, "the chat in Qwen's store", tty)
            (entry,) = entries
            assert cls.is_cwd_externally_owned(str(git_repo), entry.sid)

            resolver = AdapterResolver({"qwen-acp": cls}, use_env=False, use_entry_points=False)
            mgr = SessionManager(tmp_path / "corral.db", resolver=resolver)
            async with mgr, HandoffFlow(mgr, poll=0.3) as flow:
                sid = (await flow.link("qwen-acp", entry.sid)).session_id
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
                await asyncio.sleep(2)
                await type_prompt(tty, SECOND)
                await until(lambda: SECOND in mirrored_prompts(), 120, "the live mirror", tty)

                prompt = mgr.send(sid, QUEUED)
                await asyncio.sleep(5)  # the terminal is alive: corral must not write
                assert mgr.queue.get(prompt.id).state == PromptState.QUEUED
                assert not asked(server, QUEUED)
                assert not mgr.is_running(sid)

                await leave(tty, "/quit")
                try:
                    await until(
                        lambda: mgr.queue.get(prompt.id).state == PromptState.DELIVERED,
                        120,
                        "delivery",
                    )
                except AssertionError:
                    tail = [(e.source, e.event) for e in mgr.events(sid)][-8:]
                    raise AssertionError((mgr.get_session(sid), tail)) from None
                await until(lambda: bool(asked(server, QUEUED)), 120, "the queued prompt's request")
                await until(lambda: mgr.get_session(sid).state == SessionState.IDLE, 120, "idle")
                (queued_at,) = asked(server, QUEUED)  # exactly once
                assert queued_at > max(asked(server, SECOND)) > max(asked(server, FIRST))
                seen = server.requests.main()[queued_at].user_texts
                assert any(FIRST in t for t in seen) and any(SECOND in t for t in seen), seen

                release = await flow.continue_in_terminal(sid)
                assert not mgr.is_running(sid)
                assert release.command[1:] == ["--resume", mgr.get_session(sid).agent_session_id]
                resumed = DetachedPty(
                    release.command, env=env, cwd=Path(release.cwd), ctrl=tmp_path / "tty2"
                )
                try:
                    await asyncio.sleep(5)
                    await submit(resumed, AFTER, lambda: bool(asked(server, AFTER)))
                    (after_at,) = asked(server, AFTER)
                    history = server.requests.main()[after_at].user_texts
                    for earlier in (FIRST, SECOND, QUEUED):
                        assert any(earlier in t for t in history), (earlier, history)
                    await leave(resumed, "/quit")
                finally:
                    resumed.kill()
                await mgr.kill(sid)
        finally:
            tty.kill()
            kill_leftovers(str(isolated_home))
