"""Test helpers: SSE decoding and tool lists as the real CLIs advertise them.

Tool names and argument schemas follow the requests recorded from each pinned CLI
(``fixtures/requests``; ``test_recorded_requests.py`` checks against those directly)
(claude ``Write {file_path, content}``, codex ``exec_command {cmd}``, gemini ``write_file``,
pi ``write {path, content}``, opencode ``write {filePath, content}`` …). Only the parts the fake
reads (names, properties, required) are reproduced.
"""

from __future__ import annotations

import json
from typing import Any


def sse_events(text: str) -> list[tuple[str | None, Any]]:
    """Decode an SSE body into (event, data) pairs; ``data`` is JSON-decoded unless ``[DONE]``."""
    events: list[tuple[str | None, Any]] = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        event: str | None = None
        data: list[str] = []
        for line in block.splitlines():
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
        payload = "\n".join(data)
        events.append((event, payload if payload == "[DONE]" else json.loads(payload)))
    return events


def obj(required: list[str], **props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required}


S: dict[str, Any] = {"type": "string"}
OPTIONS = {"type": "array", "items": obj(["label", "description"], label=S, description=S)}

CLAUDE_TOOLS = [
    ("Bash", obj(["command"], command=S, description=S, timeout={"type": "number"})),
    (
        "Edit",
        obj(
            ["file_path", "old_string", "new_string"],
            file_path=S,
            old_string=S,
            new_string=S,
            replace_all={"type": "boolean"},
        ),
    ),
    ("Read", obj(["file_path"], file_path=S, offset={"type": "number"})),
    ("Write", obj(["file_path", "content"], file_path=S, content=S)),
    (
        "AskUserQuestion",
        obj(
            ["questions"],
            questions={
                "type": "array",
                "items": obj(
                    ["question", "header", "options", "multiSelect"],
                    question=S,
                    header=S,
                    options=OPTIONS,
                    multiSelect={"type": "boolean"},
                ),
            },
        ),
    ),
    ("WebFetch", obj(["url", "prompt"], url=S, prompt=S)),
]
CODEX_TOOLS = [
    ("exec_command", obj(["cmd"], cmd=S, workdir=S, yield_time_ms={"type": "number"})),
    ("write_stdin", obj(["session_id"], session_id={"type": "number"}, chars=S)),
    (
        "request_user_input",
        obj(
            ["questions"],
            questions={
                "type": "array",
                "items": obj(
                    ["id", "header", "question", "options"],
                    id=S,
                    header=S,
                    question=S,
                    options=OPTIONS,
                ),
            },
        ),
    ),
    ("view_image", obj(["path"], path=S)),
]
GEMINI_TOOLS = [
    ("write_file", obj(["file_path", "content"], file_path=S, content=S)),
    (
        "replace",
        obj(["file_path", "old_string", "new_string"], file_path=S, old_string=S, new_string=S),
    ),
    ("run_shell_command", obj(["command"], command=S, description=S, dir_path=S)),
    ("read_file", obj(["absolute_path"], absolute_path=S)),
]
PI_TOOLS = [
    ("read", obj(["path"], path=S)),
    ("bash", obj(["command"], command=S, timeout={"type": "number"})),
    (
        "edit",
        obj(
            ["path", "edits"],
            path=S,
            edits={"type": "array", "items": obj(["oldText", "newText"], oldText=S, newText=S)},
        ),
    ),
    ("write", obj(["path", "content"], path=S, content=S)),
]
OPENCODE_TOOLS = [
    ("bash", obj(["command"], command=S, timeout={"type": "integer"}, workdir=S)),
    ("edit", obj(["filePath", "oldString", "newString"], filePath=S, oldString=S, newString=S)),
    ("read", obj(["filePath"], filePath=S)),
    ("write", obj(["content", "filePath"], content=S, filePath=S)),
    (
        "question",
        obj(
            ["questions"],
            questions={
                "type": "array",
                "items": obj(
                    ["question", "header", "options"],
                    question=S,
                    header=S,
                    options=OPTIONS,
                    multiple={"type": "boolean"},
                ),
            },
        ),
    ),
]


def anthropic_tools(tools: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [{"name": n, "description": n, "input_schema": s} for n, s in tools]


def chat_tools(tools: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": n, "parameters": s}} for n, s in tools]


def responses_tools(tools: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [{"type": "function", "name": n, "parameters": s, "strict": False} for n, s in tools]


def gemini_tools(tools: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [{"functionDeclarations": [{"name": n, "parametersJsonSchema": s} for n, s in tools]}]
