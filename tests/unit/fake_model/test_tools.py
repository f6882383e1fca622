"""Capability → tool resolution against the tool lists of each CLI."""

from __future__ import annotations

from typing import Any

import pytest

from corral.testing import ToolCallSpec
from corral.testing.fake_model import ParsedRequest, ToolInfo
from corral.testing.fake_model._tools import resolve_call

from ._helpers import CLAUDE_TOOLS, CODEX_TOOLS, GEMINI_TOOLS, OPENCODE_TOOLS, PI_TOOLS

TOOLSETS = {
    "claude": CLAUDE_TOOLS,
    "codex": CODEX_TOOLS,
    "gemini": GEMINI_TOOLS,
    "pi": PI_TOOLS,
    "opencode": OPENCODE_TOOLS,
}


def resolve(cli: str, spec: dict[str, Any]) -> tuple[str, Any] | None:
    request = ParsedRequest(
        wire_api="openai-chat", tools=[ToolInfo(name=n, schema=s) for n, s in TOOLSETS[cli]]
    )
    resolved = resolve_call(ToolCallSpec.model_validate(spec), request, "/repo")
    return None if resolved is None else (resolved[0].name, resolved[1])


EDIT = {"capability": "edit", "path": "a.py", "old": "x = 1", "new": "x = 2"}


@pytest.mark.parametrize(
    ("cli", "expected"),
    [
        (
            "claude",
            ("Edit", {"file_path": "/repo/a.py", "old_string": "x = 1", "new_string": "x = 2"}),
        ),
        (
            "gemini",
            ("replace", {"file_path": "/repo/a.py", "old_string": "x = 1", "new_string": "x = 2"}),
        ),
        (
            "pi",
            ("edit", {"path": "/repo/a.py", "edits": [{"oldText": "x = 1", "newText": "x = 2"}]}),
        ),
        (
            "opencode",
            ("edit", {"filePath": "/repo/a.py", "oldString": "x = 1", "newString": "x = 2"}),
        ),
        ("codex", None),
    ],
)
def test_edit_by_capability(cli: str, expected: tuple[str, Any] | None) -> None:
    assert resolve(cli, EDIT) == expected


@pytest.mark.parametrize(
    ("cli", "expected"),
    [
        ("claude", ("Read", {"file_path": "/repo/README.md"})),
        ("gemini", ("read_file", {"absolute_path": "/repo/README.md"})),
        ("pi", ("read", {"path": "/repo/README.md"})),
        ("opencode", ("read", {"filePath": "/repo/README.md"})),
        ("codex", ("exec_command", {"cmd": "cat /repo/README.md"})),
    ],
)
def test_read_by_capability(cli: str, expected: tuple[str, Any]) -> None:
    assert resolve(cli, {"capability": "read", "path": "README.md"}) == expected


def test_edit_through_apply_patch_function() -> None:
    request = ParsedRequest(
        wire_api="openai-responses",
        tools=[
            ToolInfo(
                name="apply_patch",
                schema={
                    "type": "object",
                    "properties": {"input": {"type": "string"}},
                    "required": ["input"],
                },
            )
        ],
    )
    resolved = resolve_call(ToolCallSpec.model_validate(EDIT), request, "/repo")
    assert resolved is not None
    assert resolved[1] == {
        "input": "*** Begin Patch\n*** Update File: /repo/a.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n"
    }


def test_exact_tool_name_and_unknown_required_properties() -> None:
    assert resolve(
        "claude", {"name": "WebFetch", "arguments": {"url": "http://x", "prompt": "p"}}
    ) == ("WebFetch", {"url": "http://x", "prompt": "p"})
    request = ParsedRequest(
        wire_api="anthropic",
        tools=[
            ToolInfo(
                name="Bash",
                schema={
                    "type": "object",
                    "properties": {
                        "command": {"type": "string"},
                        "mode": {"enum": ["fast", "slow"]},
                        "timeout": {"type": "integer"},
                    },
                    "required": ["command", "mode", "timeout"],
                },
            )
        ],
    )
    resolved = resolve_call(ToolCallSpec(capability="shell", command="ls"), request, None)
    assert resolved is not None
    assert resolved[1] == {"command": "ls", "mode": "fast", "timeout": 1}


def test_relative_path_kept_without_a_known_cwd() -> None:
    request = ParsedRequest(
        wire_api="anthropic",
        tools=[
            ToolInfo(
                name="Write",
                schema={
                    "type": "object",
                    "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
                },
            )
        ],
    )
    resolved = resolve_call(
        ToolCallSpec(capability="write_file", path="x.txt", content="c"), request, None
    )
    assert resolved is not None
    assert resolved[1] == {"file_path": "x.txt", "content": "c"}
