"""Tool facts for OpenCode (server and ACP share the tool names): kinds, files, commands, todos."""

from __future__ import annotations

import re
from typing import Any

from ..events import ApprovalDecision, ApprovalOption, PlanEntry, ToolKind

_KINDS: dict[str, ToolKind] = {
    "write": ToolKind.EDIT,
    "edit": ToolKind.EDIT,
    "multiedit": ToolKind.EDIT,
    "patch": ToolKind.EDIT,
    "apply_patch": ToolKind.EDIT,
    "read": ToolKind.READ,
    "list": ToolKind.READ,
    "ls": ToolKind.READ,
    "glob": ToolKind.SEARCH,
    "grep": ToolKind.SEARCH,
    "codesearch": ToolKind.SEARCH,
    "lsp": ToolKind.SEARCH,
    "bash": ToolKind.COMMAND,
    "webfetch": ToolKind.WEB,
    "websearch": ToolKind.WEB,
    "task": ToolKind.SUBAGENT,
}

_TEST_RE = re.compile(
    r"(^|[\s;&|(])(pytest|py\.test|tox|nox|jest|vitest|mocha|rspec|go test|cargo test"
    r"|(npm|pnpm|yarn|bun)( run)? test|make (test|check)|python[0-9.]* -m (pytest|unittest))\b"
)

APPROVAL_OPTIONS = (
    ApprovalOption(id="once", label="Allow once", decision=ApprovalDecision.ALLOW),
    ApprovalOption(id="always", label="Always allow", decision=ApprovalDecision.ALLOW_ALWAYS),
    ApprovalOption(id="reject", label="Reject", decision=ApprovalDecision.DENY),
)
"""OpenCode's three permission replies, as corral decisions."""

REPLY_FOR: dict[ApprovalDecision, str] = {
    ApprovalDecision.ALLOW: "once",
    ApprovalDecision.ALLOW_ALWAYS: "always",
    ApprovalDecision.DENY: "reject",
    ApprovalDecision.CANCEL: "reject",
}
DECISION_FOR: dict[str, ApprovalDecision] = {o.id: o.decision for o in APPROVAL_OPTIONS}


def tool_kind(name: str, tool_input: Any = None) -> ToolKind:
    kind = _KINDS.get(name, ToolKind.OTHER)
    if kind is ToolKind.COMMAND and _TEST_RE.search(command_of(tool_input) or ""):
        return ToolKind.TEST
    return kind


def file_of(tool_input: Any, metadata: Any = None) -> str | None:
    for source in (metadata, tool_input):
        if isinstance(source, dict):
            for key in ("filepath", "filePath", "file_path", "path", "file"):
                value = source.get(key)
                if isinstance(value, str) and value:
                    return value
    return None


def command_of(tool_input: Any) -> str | None:
    if isinstance(tool_input, dict):
        value = tool_input.get("command")
        if isinstance(value, str):
            return value
    return None


def plan_entries(todos: Any) -> tuple[PlanEntry, ...]:
    entries: list[PlanEntry] = []
    for todo in todos if isinstance(todos, list) else []:
        if isinstance(todo, dict) and isinstance(todo.get("content"), str):
            entries.append(
                PlanEntry(
                    content=todo["content"],
                    status=str(todo.get("status") or "pending"),
                    priority=todo.get("priority")
                    if isinstance(todo.get("priority"), str)
                    else None,
                )
            )
    return tuple(entries)
