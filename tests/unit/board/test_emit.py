"""The hook emitter: classification into v1 kinds, and never blocking the agent."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
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
    done = subprocess.run(argv, input=payload, capture_output=True, text=True, timeout=10)
    assert time.monotonic() - started < 2.0
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    # Garbage on stdin is not an error either.
    bad = subprocess.run(argv, input="{nope", capture_output=True, text=True, timeout=10)
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
        payload = json.dumps(hook("Stop"))
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
            *argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        out, err = await asyncio.wait_for(proc.communicate(payload.encode()), 10)
        assert (proc.returncode, out, err) == (0, b"", b"")

        [message] = await asyncio.wait_for(
            read_board(client, "/api/events/stream?after=0", count=1), 10
        )
        event = message["data"]
        assert (event["kind"], event["session"]) == ("idle", "S")


def test_a_hangup_while_the_hook_runs_does_not_kill_the_emitter() -> None:
    """The agent's terminal may go away as the agent exits, during its SessionEnd hook."""
    import signal

    argv = [
        sys.executable,
        str(emit.__file__),
        "claude",
        "--url",
        f"http://127.0.0.1:{_dead_port()}",
    ]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
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
