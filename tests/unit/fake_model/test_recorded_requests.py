"""Replay model requests recorded from the real CLIs (``record_requests.py``) against the fake.

Each recording is one headless ``write-file`` turn: the fake must read the real request shapes
(tools, working directory, tool results) and answer the first main request with the CLI's own
write tool (codex: its shell) and the tool-result request with ``DONE``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from corral.testing import FakeModelServer, ToolCallSpec
from corral.testing.fake_model import (
    ParsedRequest,
    _anthropic,
    _chat,
    _gemini,
    _responses,
    find_cwd,
)
from corral.testing.fake_model._tools import resolve_call

from ._helpers import sse_events
from .record_requests import RECORDINGS, VERSIONS

FIXTURES = Path(__file__).parent / "fixtures" / "requests"
FILES = sorted(FIXTURES.glob("*.jsonl"))

# The write tool each CLI advertised, and the argument carrying the path.
EXPECTED = {
    "claude": ("Write", "file_path"),
    "codex": ("exec_command", "cmd"),
    "opencode": ("write", "filePath"),
    "gemini": ("write_file", "file_path"),
    "pi": ("write", "path"),
    "qwen": ("write_file", "file_path"),
    "hermes": ("write_file", "path"),
}


def test_every_pinned_cli_has_a_recording() -> None:
    expected = []
    for name in RECORDINGS:
        cli, _, api = name.partition("@")
        expected.append(f"{cli}-{VERSIONS[cli]}{'@' + api if api else ''}.jsonl")
    assert sorted(f.name for f in FILES) == sorted(expected)


def tool_calls(api: str, text: str) -> list[tuple[str, dict[str, Any]]]:
    """(name, arguments) of every tool call in a streamed reply."""
    events = sse_events(text)
    calls: list[tuple[str, dict[str, Any]]] = []
    if api == "anthropic":
        for event, data in events:
            if event == "content_block_start" and data["content_block"]["type"] == "tool_use":
                calls.append((data["content_block"]["name"], {}))
                partial = ""
            elif event == "content_block_delta" and data["delta"]["type"] == "input_json_delta":
                partial += data["delta"]["partial_json"]
                calls[-1] = (calls[-1][0], json.loads(partial) if partial.endswith("}") else {})
    elif api == "openai-responses":
        for event, data in events:
            if event == "response.output_item.done" and data["item"]["type"] == "function_call":
                calls.append((data["item"]["name"], json.loads(data["item"]["arguments"])))
    elif api == "openai-chat":
        names: dict[int, str] = {}
        args: dict[int, str] = {}
        for _, data in events:
            if data == "[DONE]" or not data["choices"]:
                continue
            for call in data["choices"][0]["delta"].get("tool_calls", []):
                names.setdefault(call["index"], call["function"].get("name", ""))
                args[call["index"]] = args.get(call["index"], "") + call["function"]["arguments"]
        calls = [(names[i], json.loads(args[i])) for i in sorted(names)]
    else:
        for _, data in events:
            for part in data["candidates"][0]["content"]["parts"]:
                if "functionCall" in part:
                    calls.append((part["functionCall"]["name"], part["functionCall"]["args"]))
    return calls


@pytest.mark.parametrize("fixture", FILES, ids=[f.stem for f in FILES])
def test_recorded_turn_replays(fixture: Path) -> None:
    rows = [json.loads(line) for line in fixture.read_text().splitlines()]
    cli, cwd = rows[0]["cli"], rows[0]["cwd"]
    tool, argument = EXPECTED[cli]
    with (
        FakeModelServer("write-file") as srv,
        httpx.Client(base_url=srv.base_url, timeout=10) as http,
    ):
        replies = [http.post(row["path"], params=row["query"], json=row["body"]) for row in rows]
        records = list(srv.requests)
    assert all(r.status_code == 200 for r in replies)
    main = [(rec, rep) for rec, rep in zip(records, replies, strict=True) if rec.is_main]
    assert [rec.step for rec, _ in main] == ["write hello.txt", "done"]
    first, first_reply = main[0]
    assert first.last_user_text.endswith("make hello.txt") or any(
        "make hello.txt" in t for t in first.user_texts
    )
    assert tool in first.tool_names
    calls = tool_calls(first.wire_api or "", first_reply.text)
    assert len(calls) == 1
    name, args = calls[0]
    assert name == tool
    assert f"{cwd}/hello.txt" in str(args[argument])
    second = main[1][0]
    assert second.last_is_tool_result
    assert len(second.tool_results) == 1
    assert [m.role for m in second.messages].count("assistant") >= 1
    # Side requests (titles, gemini's router) are answered but never counted as turns.
    assert all(rec.turn is None for rec in records if not rec.is_main)


def _first_main_request(fixture: Path) -> tuple[ParsedRequest, str]:
    rows = [json.loads(line) for line in fixture.read_text().splitlines()]
    row = next(r for r in rows if r["body"].get("tools"))
    path, body = row["path"], row["body"]
    if path.endswith("/messages"):
        return _anthropic.parse(body), row["cwd"]
    if path.endswith("/responses"):
        return _responses.parse(body), row["cwd"]
    if path.endswith("/chat/completions"):
        return _chat.parse(body), row["cwd"]
    return _gemini.parse(body, "m", stream=True), row["cwd"]


# What each capability resolves to with the tool schemas the real CLIs sent (None: not offered).
CAPABILITIES: dict[str, dict[str, tuple[str, dict[str, Any]] | None]] = {
    "claude": {
        "edit": ("Edit", {"file_path": "/r/a.txt", "old_string": "x", "new_string": "y"}),
        "shell": ("Bash", {"command": "ls", "description": "Run a command"}),
        "ask_user": None,
    },
    "codex": {
        "edit": None,
        "shell": ("exec_command", {"cmd": "ls"}),
        "ask_user": (
            "request_user_input",
            {
                "questions": [
                    {
                        "header": "Question",
                        "id": "q1",
                        "question": "Color?",
                        "options": [
                            {"label": "red", "description": "red"},
                            {"label": "blue", "description": "blue"},
                        ],
                    }
                ]
            },
        ),
    },
    "gemini": {
        "edit": (
            "replace",
            {"file_path": "/r/a.txt", "instruction": "fake", "old_string": "x", "new_string": "y"},
        ),
        "shell": ("run_shell_command", {"command": "ls", "description": "Run a command"}),
        "ask_user": None,
    },
    "hermes": {
        "edit": (
            "patch",
            {
                "mode": "replace",
                "path": "/r/a.txt",
                "old_string": "x",
                "new_string": "y",
            },
        ),
        "shell": ("terminal", {"command": "ls"}),
        "ask_user": ("clarify", {"question": "Color?", "choices": ["red", "blue"]}),
    },
    "opencode": {
        "edit": ("edit", {"filePath": "/r/a.txt", "oldString": "x", "newString": "y"}),
        "shell": ("bash", {"command": "ls"}),
        "ask_user": None,
    },
    "pi": {
        "edit": ("edit", {"path": "/r/a.txt", "edits": [{"oldText": "x", "newText": "y"}]}),
        "shell": ("bash", {"command": "ls"}),
        "ask_user": None,
    },
    "qwen": {
        "edit": ("edit", {"file_path": "/r/a.txt", "old_string": "x", "new_string": "y"}),
        "shell": ("run_shell_command", {"command": "ls", "description": "Run a command"}),
        "ask_user": None,
    },
}
SPECS = {
    "edit": {"capability": "edit", "path": "a.txt", "old": "x", "new": "y"},
    "shell": {"capability": "shell", "command": "ls"},
    "ask_user": {"capability": "ask_user", "question": "Color?", "options": ["red", "blue"]},
}


@pytest.mark.parametrize("fixture", FILES, ids=[f.stem for f in FILES])
def test_capabilities_against_recorded_tool_schemas(fixture: Path) -> None:
    request, cwd = _first_main_request(fixture)
    assert find_cwd(request) == cwd
    cli = fixture.stem.split("-")[0]
    for capability, expected in CAPABILITIES[cli].items():
        resolved = resolve_call(ToolCallSpec.model_validate(SPECS[capability]), request, "/r")
        got = None if resolved is None else (resolved[0].name, resolved[1])
        assert got == expected, capability
