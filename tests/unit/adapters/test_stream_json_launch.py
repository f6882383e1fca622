"""build_launch for Claude Code and Qwen Code: pure, table-driven, no process started."""

from __future__ import annotations

import pytest

from corral.adapters._launch import StreamJsonRequest
from corral.adapters.claude import build_launch as claude_launch
from corral.adapters.qwen import build_launch as qwen_launch
from corral.errors import ConfigError

CLAUDE_BASE = (
    "claude",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--verbose",
    "--include-partial-messages",
    "--permission-prompt-tool",
    "stdio",
)
QWEN_BASE = (
    "qwen",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--include-partial-messages",
)

CLAUDE_CASES = [
    ("plain", {}, ()),
    ("model", {"model": "opus"}, ("--model", "opus")),
    ("mode", {"permission_mode": "acceptEdits"}, ("--permission-mode", "acceptEdits")),
    ("resume", {"resume": "abc"}, ("--resume", "abc")),
    ("fork", {"resume": "abc", "fork_session": True}, ("--resume", "abc", "--fork-session")),
    ("fork without resume is ignored", {"fork_session": True}, ()),
    ("session id", {"session_id": "u-1"}, ("--session-id", "u-1")),
    ("dirs", {"add_dirs": ("/a", "/b")}, ("--add-dir", "/a", "--add-dir", "/b")),
    (
        "settings",
        {"settings": {"permissions": {"allow": ["Read"]}}},
        ("--settings", '{"permissions":{"allow":["Read"]}}'),
    ),
    ("effort", {"effort": "high"}, ("--effort", "high")),
    ("extra args last", {"model": "m", "extra_args": ("--x", "1")}, ("--model", "m", "--x", "1")),
]


@pytest.mark.parametrize(("name", "fields", "tail"), CLAUDE_CASES, ids=[c[0] for c in CLAUDE_CASES])
def test_claude_argv(name: str, fields: dict, tail: tuple[str, ...]) -> None:
    launch = claude_launch(StreamJsonRequest(binary="claude", **fields), base_env={})
    assert launch.argv == CLAUDE_BASE + tail


ENV_CASES = [
    ("drops CLAUDECODE", {"CLAUDECODE": "1", "PATH": "/bin"}, {}, {}, False, {"PATH": "/bin"}),
    ("request env wins", {"A": "base"}, {"A": "req"}, {}, False, {"A": "req"}),
    ("cwd sets PWD", {}, {}, {"cwd": "/repo"}, False, {"PWD": "/repo"}),
    (
        "root bypass sets IS_SANDBOX",
        {},
        {},
        {"permission_mode": "bypassPermissions"},
        True,
        {"IS_SANDBOX": "1"},
    ),
    ("bypass as a user needs nothing", {}, {}, {"permission_mode": "bypassPermissions"}, False, {}),
    ("root without bypass needs nothing", {}, {}, {"permission_mode": "default"}, True, {}),
]


@pytest.mark.parametrize(
    ("name", "base", "extra", "fields", "as_root", "expected"),
    ENV_CASES,
    ids=[c[0] for c in ENV_CASES],
)
def test_claude_env(
    name: str, base: dict, extra: dict, fields: dict, as_root: bool, expected: dict
) -> None:
    launch = claude_launch(
        StreamJsonRequest(binary="claude", env=extra, **fields), base_env=base, as_root=as_root
    )
    assert launch.env == expected
    assert launch.cwd == fields.get("cwd")


def test_claude_launch_is_pure() -> None:
    request = StreamJsonRequest(binary="claude", model="m", add_dirs=("/x",), env={"K": "v"})
    base = {"PATH": "/bin"}
    assert claude_launch(request, base_env=base) == claude_launch(request, base_env=base)
    assert base == {"PATH": "/bin"}


QWEN_CASES = [
    ("default mode is explicit", {}, ("--approval-mode", "default")),
    ("model", {"model": "qwen3"}, ("--model", "qwen3", "--approval-mode", "default")),
    ("claude mode names map", {"permission_mode": "acceptEdits"}, ("--approval-mode", "auto-edit")),
    ("bypass is yolo", {"permission_mode": "bypassPermissions"}, ("--approval-mode", "yolo")),
    ("native names pass", {"permission_mode": "plan"}, ("--approval-mode", "plan")),
    ("resume", {"resume": "s1"}, ("--approval-mode", "default", "--resume", "s1")),
    ("session id", {"session_id": "s2"}, ("--approval-mode", "default", "--session-id", "s2")),
    ("dirs", {"add_dirs": ("/a",)}, ("--approval-mode", "default", "--include-directories", "/a")),
    (
        "extra args",
        {"extra_args": ("--auth-type", "openai")},
        ("--approval-mode", "default", "--auth-type", "openai"),
    ),
]


@pytest.mark.parametrize(("name", "fields", "tail"), QWEN_CASES, ids=[c[0] for c in QWEN_CASES])
def test_qwen_argv(name: str, fields: dict, tail: tuple[str, ...]) -> None:
    launch = qwen_launch(StreamJsonRequest(binary="qwen", **fields), base_env={"HOME": "/h"})
    assert launch.argv == QWEN_BASE + tail
    assert launch.env["HOME"] == "/h"


@pytest.mark.parametrize(
    "fields",
    [
        {"fork_session": True, "resume": "x"},
        {"settings": {}},
        {"effort": "high"},
        {"permission_mode": "dontAsk"},
    ],
)
def test_qwen_refuses_what_it_cannot_do(fields: dict) -> None:
    with pytest.raises(ConfigError):
        qwen_launch(StreamJsonRequest(binary="qwen", **fields), base_env={})
