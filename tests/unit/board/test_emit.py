"""The hook emitter: classification into v1 kinds, and never blocking the agent."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from server.conftest import live_server, make_app

from corral.board import Ingestor, emit
from corral.events import ToolKind
from corral.events.board import board_kind

from .test_api import read_board


def hook(name: str, **fields: Any) -> dict[str, Any]:
    return {"hook_event_name": name, "session_id": "S", **fields}


@pytest.mark.parametrize(
    ("agent", "payload", "expected"),
    [
        ("claude", hook("SessionStart", source="startup"), {"kind": "session", "detail": "startup"}),
        ("claude", hook("SessionEnd", reason="exit"), {"kind": "end"}),
        ("claude", hook("Stop"), {"kind": "idle"}),
        (
            "claude",
            hook("PreToolUse", tool_name="Write", tool_input={"file_path": "/p/a.py"}),
            {"kind": "edit", "file": "/p/a.py", "running": True, "summary": "Write /p/a.py"},
        ),
        (
            "claude",
            hook("PostToolUse", tool_name="Bash", tool_input={"command": "git status"}),
            {"kind": "git", "cmd": "git status", "ok": True},
        ),
        (
            "claude",
            hook("PostToolUseFailure", tool_name="Bash", tool_input={"command": "pytest -q"}, error="boom"),
            {"kind": "test", "ok": False, "detail": "boom"},
        ),
        ("claude", hook("PreToolUse", tool_name="Grep", tool_input={"pattern": "x"}), {"kind": "search"}),
        ("claude", hook("PreToolUse", tool_name="mcp__srv__x"), {"kind": "other"}),
        ("claude", hook("PreToolUse", tool_name="TodoWrite"), {"kind": "plan"}),
        ("claude", hook("PreToolUse", tool_name="Task"), {"kind": "subagent"}),
        ("claude", hook("PreToolUse", tool_name="WebFetch", tool_input={"url": "u"}), {"kind": "web"}),
        ("gemini", hook("BeforeTool", tool_name="run_shell_command", tool_input={"command": "ruff check"}), {"kind": "check", "running": True}),
        ("gemini", hook("AfterAgent"), {"kind": "idle"}),
        ("qwen", hook("PostToolUse", tool_name="read_file", tool_input={"absolute_path": "/a"}, tool_response={"is_error": True}), {"kind": "read", "ok": False}),
    ],
)  # fmt: skip
def test_classify(agent: str, payload: dict[str, Any], expected: dict[str, Any]) -> None:
    event = emit.classify(agent, payload)
    assert event is not None
    assert event["v"] == 1 and event["session"] == "S"
    assert {k: event.get(k) for k in expected} == expected
    Ingestor().validate(event)  # the board accepts what the emitter sends


@pytest.mark.parametrize(
    "payload", [{}, hook("UserPromptSubmit"), hook("Notification"), {"x": [1]}]
)
def test_non_board_hooks_are_ignored(payload: dict[str, Any]) -> None:
    assert emit.classify("claude", payload) is None


@pytest.mark.parametrize(
    "cmd",
    ["git commit -m x", "pytest -q", "python -m unittest", "ruff check .", "ls -la", "npm test"],
)
def test_command_kinds_agree_with_the_event_projection(cmd: str) -> None:
    assert emit.command_kind(cmd) == board_kind(ToolKind.COMMAND, cmd)


def test_board_env_is_forwarded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOARD_AGENT_ID", "agent-7")
    monkeypatch.setenv("BOARD_TASK", "42-fix")
    event = emit.classify("claude", hook("Stop"))
    assert event is not None and (event["agent"], event["task"]) == ("agent-7", "42-fix")
    monkeypatch.setenv("BOARD_PORT", "9999")
    assert emit.board_url("http://127.0.0.1:1") == "http://127.0.0.1:9999"


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spool_env(tmp_path: Path) -> dict[str, str]:
    """The emitter's environment with its spool under ``tmp_path``: a session's poster posts every
    event spooled for that session id, so tests sharing ``S`` must not share a spool."""
    return {**os.environ, "TMPDIR": str(tmp_path)}


def test_a_down_board_costs_the_agent_nothing(tmp_path: Path) -> None:
    payload = json.dumps(hook("PreToolUse", tool_name="Bash", tool_input={"command": "ls"}))
    argv = [
        sys.executable,
        str(emit.__file__),
        "claude",
        "--url",
        f"http://127.0.0.1:{_dead_port()}",
    ]
    started = time.monotonic()
    env = spool_env(tmp_path)
    done = subprocess.run(argv, input=payload, capture_output=True, text=True, timeout=10, env=env)
    assert time.monotonic() - started < 2.0
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    # Garbage on stdin is not an error either.
    bad = subprocess.run(argv, input="{nope", capture_output=True, text=True, timeout=10, env=env)
    assert (bad.returncode, bad.stdout, bad.stderr) == (0, "", "")


async def test_the_detached_post_reaches_the_board_with_the_token(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("tok\n")
    # The service requires the token, so the event arrives only if the emitter sent it.
    app = make_app(tmp_path, token="tok")
    auth = {"Authorization": "Bearer tok"}
    async with (
        live_server(app) as live,
        httpx.AsyncClient(base_url=live.url, headers=auth) as client,
    ):
        payload = json.dumps(hook("SessionStart"))
        argv = [
            sys.executable,
            str(emit.__file__),
            "claude",
            "--url",
            live.url,
            "--token-file",
            str(token_file),
        ]
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=spool_env(tmp_path),
        )
        out, err = await asyncio.wait_for(proc.communicate(payload.encode()), 10)
        assert (proc.returncode, out, err) == (0, b"", b"")

        [message] = await asyncio.wait_for(
            read_board(client, "/api/events/stream?after=0", count=1), 10
        )
        event = message["data"]
        assert (event["kind"], event["session"]) == ("session", "S")


def test_a_hangup_while_the_hook_runs_does_not_kill_the_emitter(tmp_path: Path) -> None:
    """The agent's terminal may go away as the agent exits, during its SessionEnd hook."""
    import signal

    argv = [
        sys.executable,
        str(emit.__file__),
        "claude",
        "--url",
        f"http://127.0.0.1:{_dead_port()}",
    ]
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=spool_env(tmp_path)
    )
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # until main() has set its disposition
            status = Path(f"/proc/{proc.pid}/status").read_text()
            ignored = int(
                next(ln for ln in status.splitlines() if ln.startswith("SigIgn:")).split()[1], 16
            )
            if ignored & (1 << (signal.SIGHUP - 1)):
                break
            time.sleep(0.02)
        proc.send_signal(signal.SIGHUP)
        out, _ = proc.communicate(json.dumps(hook("SessionEnd")), timeout=10)
    finally:
        proc.kill()
    assert (proc.returncode, out) == (0, "")


@pytest.fixture
def posted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What the spool's poster POSTs, in order (the spool under ``tmp_path``)."""
    out: list[dict[str, Any]] = []
    monkeypatch.setattr(emit, "_spool_root", lambda: str(tmp_path / "spool"))
    monkeypatch.setattr(emit, "post", lambda url, event, token, timeout=2.0: out.append(event))
    return out


def spooled(agent: str, payload: dict[str, Any]) -> str:
    event = emit.classify(agent, payload)
    assert event is not None
    directory = emit._spool(event)
    assert directory is not None
    return directory


LONG = 60.0
"""A wait no test sits out: a drain that ends well before it did not wait for it."""


def test_a_session_start_spooled_late_is_still_posted_first(
    posted: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Qwen Code's TUI does not await its SessionStart hook: the first tool call's emitter can
    spool before the start's does. The poster holds the session's first post until the start is
    there, and posts it first."""
    monkeypatch.setattr(emit, "SESSION_WAIT", LONG)
    directory = spooled(
        "qwen", hook("PreToolUse", tool_name="write_file", tool_input={"file_path": "h"})
    )
    late = threading.Timer(0.3, spooled, ("qwen", hook("SessionStart", source="startup")))
    late.start()
    started = time.monotonic()
    emit._drain_spool(directory, "http://127.0.0.1:9", None)
    late.join()
    assert [(e["kind"], e.get("running")) for e in posted] == [("session", None), ("edit", True)]
    assert time.monotonic() - started < LONG / 2  # it went on once the start was there

    # Once the start is posted, the session's later events are not held.
    spooled("qwen", hook("PostToolUse", tool_name="write_file", tool_input={"file_path": "h"}))
    started = time.monotonic()
    emit._drain_spool(directory, "http://127.0.0.1:9", None)
    assert time.monotonic() - started < LONG / 2
    assert [e["kind"] for e in posted] == ["session", "edit", "edit"]


def test_a_session_whose_start_never_comes_waits_once(
    posted: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(emit, "SESSION_WAIT", 0.3)
    directory = spooled("claude", hook("Stop"))
    started = time.monotonic()
    emit._drain_spool(directory, "http://127.0.0.1:9", None)
    assert time.monotonic() - started >= 0.3
    monkeypatch.setattr(emit, "SESSION_WAIT", LONG)  # the marker, not the wait, lets it through
    spooled("claude", hook("Stop"))
    started = time.monotonic()
    emit._drain_spool(directory, "http://127.0.0.1:9", None)
    assert time.monotonic() - started < LONG / 2
    assert [e["kind"] for e in posted] == ["idle", "idle"]


def test_the_poster_posts_what_is_spooled_while_it_posts(
    posted: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A poster that gives up waiting for the lock leaves its event to the one holding it."""
    directory = spooled("claude", hook("SessionStart"))
    record = emit.post

    def post_and_spool(
        url: str, event: dict[str, Any], token: str | None, timeout: float = 2.0
    ) -> None:
        record(url, event, token)
        if event["kind"] == "session":  # another hook, while this POST is under way
            spooled("claude", hook("Stop"))

    monkeypatch.setattr(emit, "post", post_and_spool)
    emit._drain_spool(directory, "http://127.0.0.1:9", None)
    assert [e["kind"] for e in posted] == ["session", "idle"]
    assert not [n for n in os.listdir(directory) if n.endswith(".json")]


def test_an_unreadable_spool_file_is_dropped(posted: list[dict[str, Any]]) -> None:
    directory = spooled("claude", hook("SessionStart"))
    Path(directory, "1-00000000000000000001-1.json").write_text("{nope")
    spooled("claude", hook("Stop"))
    emit._drain_spool(directory, "http://127.0.0.1:9", None)
    assert [e["kind"] for e in posted] == ["session", "idle"]
    assert not [n for n in os.listdir(directory) if n.endswith(".json")]
