"""Tool facts for the Claude Code stream-json dialect (and Qwen Code, which speaks it too).

Pure helpers: what kind a tool is, which file or command it touches, and how a structured tool
result becomes a :class:`~corral.events.FileDiff`.
"""

from __future__ import annotations

import re
from typing import Any

from ..events import FileDiff, Question, ToolKind
from ._diff import unified
from ._total import sequence

_KINDS: dict[str, ToolKind] = {
    # Claude Code
    "Write": ToolKind.EDIT,
    "Edit": ToolKind.EDIT,
    "MultiEdit": ToolKind.EDIT,
    "NotebookEdit": ToolKind.EDIT,
    "Read": ToolKind.READ,
    "LS": ToolKind.READ,
    "Grep": ToolKind.SEARCH,
    "Glob": ToolKind.SEARCH,
    "Bash": ToolKind.COMMAND,
    "BashOutput": ToolKind.COMMAND,
    "WebFetch": ToolKind.WEB,
    "WebSearch": ToolKind.WEB,
    "Task": ToolKind.SUBAGENT,
    "Agent": ToolKind.SUBAGENT,
    # Qwen Code
    "write_file": ToolKind.EDIT,
    "edit": ToolKind.EDIT,
    "replace": ToolKind.EDIT,
    "read_file": ToolKind.READ,
    "read_many_files": ToolKind.READ,
    "list_directory": ToolKind.READ,
    "grep_search": ToolKind.SEARCH,
    "glob": ToolKind.SEARCH,
    "run_shell_command": ToolKind.COMMAND,
    "web_fetch": ToolKind.WEB,
    "web_search": ToolKind.WEB,
    "agent": ToolKind.SUBAGENT,
    "task": ToolKind.SUBAGENT,
}

QUESTION_TOOLS = frozenset({"AskUserQuestion", "ask_user_question"})
"""Tools whose permission request is really a question for the user."""

_TEST_RE = re.compile(
    r"(^|[\s;&|(])("
    r"pytest|py\.test|tox|nox|jest|vitest|mocha|rspec|phpunit|ctest"
    r"|python[0-9.]* -m (pytest|unittest)"
    r"|(npm|pnpm|yarn|bun)( run)? test"
    r"|go test|cargo test|mvn test|gradle test|\./gradlew test|make (test|check)|dotnet test"
    r")\b"
)


def tool_kind(name: str, tool_input: Any = None) -> ToolKind:
    if not isinstance(name, str):
        return ToolKind.OTHER
    if name.startswith("mcp__"):
        return ToolKind.MCP
    kind = _KINDS.get(name, ToolKind.OTHER)
    if kind is ToolKind.COMMAND:
        cmd = tool_cmd(tool_input)
        if cmd and _TEST_RE.search(cmd):
            return ToolKind.TEST
    return kind


def _str(obj: Any, *keys: str) -> str | None:
    if not isinstance(obj, dict):
        return None
    for key in keys:
        value = obj.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def tool_file(tool_input: Any) -> str | None:
    return _str(tool_input, "file_path", "notebook_path", "absolute_path", "path", "filePath")


def tool_cmd(tool_input: Any) -> str | None:
    return _str(tool_input, "command", "cmd")


def tool_title(name: str, tool_input: Any) -> str:
    detail = (
        tool_cmd(tool_input)
        or tool_file(tool_input)
        or _str(tool_input, "pattern", "url", "query", "description")
    )
    return f"{name}: {detail}" if detail else name


def _unified(path: str, old: str, new: str) -> str:
    return unified(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        path if old else "/dev/null",
        path,
    )


def _patch_to_diff(path: str, hunks: list[Any]) -> str | None:
    out = [f"--- {path}\n", f"+++ {path}\n"]
    for hunk in hunks:
        if not isinstance(hunk, dict) or not isinstance(hunk.get("lines"), list):
            return None
        out.append(
            f"@@ -{hunk.get('oldStart', 0)},{hunk.get('oldLines', 0)} "
            f"+{hunk.get('newStart', 0)},{hunk.get('newLines', 0)} @@\n"
        )
        out.extend(f"{line}\n" for line in hunk["lines"] if isinstance(line, str))
    return "".join(out)


def file_diff(
    call_id: str, name: str, tool_input: Any, structured: Any, raw: Any
) -> FileDiff | None:
    """The file change a finished edit-kind call made, from its structured result or its input."""
    if isinstance(structured, dict):
        path = _str(structured, "filePath", "file_path", "notebook_path")
        if path:
            original = structured.get("originalFile")
            old = original if isinstance(original, str) else None
            new = (
                structured.get("content")
                if structured.get("type") in ("create", "update")
                else None
            )
            new_text = new if isinstance(new, str) else None
            hunks = structured.get("structuredPatch")
            diff: str | None = None
            if isinstance(hunks, list) and hunks:
                diff = _patch_to_diff(path, hunks)
            elif new_text is not None:
                diff = _unified(path, old or "", new_text)
            if diff is not None or new_text is not None:
                return FileDiff(
                    path=path, diff=diff, old_text=old, new_text=new_text, call_id=call_id, raw=raw
                )
    # No structured result (Qwen Code, older builds): what the call asked to write.
    path = tool_file(tool_input)
    if path is None or not isinstance(tool_input, dict):
        return None
    content = tool_input.get("content")
    if isinstance(content, str):
        return FileDiff(
            path=path, diff=_unified(path, "", content), new_text=content, call_id=call_id, raw=raw
        )
    old_s, new_s = tool_input.get("old_string"), tool_input.get("new_string")
    if isinstance(old_s, str) and isinstance(new_s, str):
        return FileDiff(
            path=path,
            diff=_unified(path, old_s, new_s),
            old_text=old_s,
            new_text=new_s,
            call_id=call_id,
            raw=raw,
        )
    return None


# ── content helpers ──


def result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


def exit_code(structured: Any) -> int | None:
    if isinstance(structured, dict):
        code = structured.get("exitCode", structured.get("exit_code"))
        if isinstance(code, int):
            return code
    return None


def assistant_error_text(message: dict[str, Any]) -> str | None:
    texts = [
        b.get("text")
        for b in sequence(message.get("content"))
        if isinstance(b, dict) and b.get("type") == "text"
    ]
    return " ".join(t for t in texts if isinstance(t, str)) or None


def questions(tool_input: Any) -> tuple[Question, ...]:
    items = tool_input.get("questions") if isinstance(tool_input, dict) else None
    out: list[Question] = []
    for item in items or ():
        if not isinstance(item, dict) or not isinstance(item.get("question"), str):
            continue
        options = tuple(
            str(o.get("label", "")) if isinstance(o, dict) else str(o)
            for o in sequence(item.get("options"))
        )
        out.append(
            Question(
                question=item["question"],
                header=item["header"] if isinstance(item.get("header"), str) else None,
                options=options,
                multi_select=bool(item.get("multiSelect")),
            )
        )
    return tuple(out)
