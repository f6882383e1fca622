"""Turning a capability ("write a file", "run a shell command") into a concrete tool call.

Tool sets differ per CLI and per release, so a scenario names a capability and this module picks
whichever advertised tool provides it, then fills the arguments by the property names of that
tool's JSON schema (``file_path`` / ``filePath`` / ``path``; ``command`` as a string or an array …).
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from typing import Any

from ._scenario import Capability, ToolCallSpec
from ._types import ParsedRequest, ToolInfo

# Known tool names per capability, most specific first; matched case-sensitively, then ignoring case.
CAPABILITY_TOOLS: dict[str, tuple[str, ...]] = {
    # "create": GitHub Copilot CLI ({path, file_text}); "Create": Factory Droid.
    "write_file": ("Write", "write", "write_file", "create_file", "WriteFile", "create", "Create"),
    "edit": ("Edit", "edit", "replace", "edit_file", "str_replace", "patch", "MultiEdit"),
    "shell": (
        "Bash",
        "bash",
        "run_shell_command",
        "exec_command",
        "shell_command",
        "shell",
        "terminal",
        "local_shell",
    ),
    "read": ("Read", "read", "read_file", "view", "ReadFile"),
    "ask_user": (
        "AskUserQuestion",
        "question",
        "request_user_input",
        "ask_user",
        "ask_user_question",
        "clarify",
    ),
}

# Which semantic value a schema property name receives.
_ALIASES: dict[str, tuple[str, ...]] = {
    "path": (
        "file_path",
        "filePath",
        "path",
        "absolute_path",
        "file",
        "filename",
        "target_file",
    ),
    "content": ("content", "contents", "file_text", "text"),
    "command": ("command", "cmd", "commands", "script"),
    "old": ("old_string", "oldString", "oldText", "old_str", "old_text", "search"),
    "new": ("new_string", "newString", "newText", "new_str", "new_text", "replacement"),
    "question": ("question", "prompt", "message"),
    "header": ("header", "title"),
    "label": ("label",),
    "description": ("description",),
    "id": ("id",),
    "patch": ("input", "patch"),
}

# Regexes that find the client's working directory in its system prompt, one per CLI family.
CWD_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"Primary working directory:\s*(\S+)"),  # claude
    re.compile(r"<cwd>\s*([^<\n]+?)\s*</cwd>"),  # codex
    re.compile(r"Workspace Directories:\*\*\s*\n?\s*-\s*(\S+)"),  # gemini
    re.compile(r"Current working directory:\s*(\S+)"),  # pi
    re.compile(r"working in the directory[:\s]+['\"`]?([^\s'\"`]+?)['\"`]?[.,]?(?:\s|$)"),  # qwen
    re.compile(r"Working directory:\s*(\S+)"),  # opencode
)


def find_cwd(request: ParsedRequest) -> str | None:
    text = request.all_text()
    for pattern in CWD_PATTERNS:
        found = pattern.search(text)
        if found:
            return found.group(1).rstrip(".,;")
    return None


def pick_tool(capability: Capability, tools: list[ToolInfo]) -> ToolInfo | None:
    by_name = {t.name: t for t in tools}
    names = CAPABILITY_TOOLS[capability]
    for name in names:
        if name in by_name:
            return by_name[name]
    lowered = {t.name.lower(): t for t in tools}
    for name in names:
        if name.lower() in lowered:
            return lowered[name.lower()]
    return None


def resolve_call(
    spec: ToolCallSpec, request: ParsedRequest, cwd_override: str | None
) -> tuple[ToolInfo, Any] | None:
    """Pick the tool for ``spec`` and build its arguments (a dict, or a string for freeform tools).

    Returns ``None`` when the client advertised no tool with that capability or name.
    """
    if spec.name is not None:
        tool = next((t for t in request.tools if t.name == spec.name), None)
        if tool is None:
            tool = ToolInfo(name=spec.name)
        return tool, dict(spec.arguments or {})
    if spec.capability is None:
        return None
    values = _semantic_values(spec, request, cwd_override)
    tool = pick_tool(spec.capability, request.tools)
    if tool is None:
        return _fallback(spec.capability, request.tools, values)
    if tool.freeform:
        return tool, str(values.get("command") or values.get("content") or "")
    arguments = _fill_object(tool.schema, values)
    if spec.arguments:
        arguments.update(spec.arguments)
    return tool, arguments


def _fallback(
    capability: Capability, tools: list[ToolInfo], values: dict[str, Any]
) -> tuple[ToolInfo, Any] | None:
    """No dedicated tool: write/edit through ``apply_patch``, else write/read through the shell.

    Codex, for one, advertises neither a write tool nor (in some builds) ``apply_patch``; with a
    known model name it offers only a freeform JavaScript ``exec`` tool ("code mode").
    """
    patch_tool = next((t for t in tools if t.name == "apply_patch"), None)
    patch = _patch(capability, values)
    if patch_tool is not None and patch is not None:
        if patch_tool.freeform:
            return patch_tool, patch
        return patch_tool, _fill_object(patch_tool.schema, {"patch": patch})
    command = _shell_equivalent(capability, values)
    if command is None:
        return None
    shell = pick_tool("shell", tools)
    if shell is not None:
        if shell.freeform:
            return shell, command
        shell_values = {"command": command, "description": "Run a command"}
        return shell, _fill_object(shell.schema, shell_values)
    code_mode = next((t for t in tools if t.name == "exec" and t.freeform), None)
    if code_mode is not None:
        return code_mode, f"await tools.exec_command({{cmd: {json.dumps(command)}}});\n"
    return None


def _patch(capability: Capability, values: dict[str, Any]) -> str | None:
    path = values.get("path")
    if path is None:
        return None
    if capability == "write_file":
        lines = str(values.get("content", "")).split("\n")
        body = "".join(f"+{line}\n" for line in lines)
        return f"*** Begin Patch\n*** Add File: {path}\n{body}*** End Patch\n"
    if capability == "edit":
        old = "".join(f"-{line}\n" for line in str(values.get("old", "")).split("\n"))
        new = "".join(f"+{line}\n" for line in str(values.get("new", "")).split("\n"))
        return f"*** Begin Patch\n*** Update File: {path}\n@@\n{old}{new}*** End Patch\n"
    return None


def _shell_equivalent(capability: Capability, values: dict[str, Any]) -> str | None:
    path = values.get("path")
    if path is None:
        return None
    if capability == "write_file":
        content = shlex.quote(str(values.get("content", "")))
        return f"printf '%s' {content} > {shlex.quote(str(path))}"
    if capability == "read":
        return f"cat {shlex.quote(str(path))}"
    return None


def _semantic_values(
    spec: ToolCallSpec, request: ParsedRequest, cwd_override: str | None
) -> dict[str, Any]:
    values: dict[str, Any] = {}
    if spec.path is not None:
        cwd = cwd_override or find_cwd(request)
        path = spec.path
        if cwd and not posixpath.isabs(path):
            path = posixpath.join(cwd, path)
        values["path"] = path
    for key in ("content", "command", "old", "new", "question"):
        value = getattr(spec, key)
        if value is not None:
            values[key] = value
    if spec.capability == "ask_user":
        values.setdefault("question", "Which option?")
        values["header"] = "Question"
        values["options"] = list(spec.options) or ["yes", "no"]
        values["id"] = "q1"
    if spec.capability == "shell":
        values.setdefault("description", "Run a command")
    return values


def _schema_type(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if not isinstance(kind, str):
        if "properties" in schema:
            return "object"
        if "items" in schema:
            return "array"
        return "string"
    return kind.lower()


def _fill_object(schema: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    out: dict[str, Any] = {}
    for prop, prop_schema in properties.items():
        filled = _fill_property(prop, prop_schema if isinstance(prop_schema, dict) else {}, values)
        if filled is not _MISSING:
            out[prop] = filled
        elif prop in required:
            out[prop] = _placeholder(prop_schema if isinstance(prop_schema, dict) else {})
    if not properties:
        # No schema to go by: use the conventional names.
        for key in ("path", "content", "command", "question"):
            if key in values:
                out[key] = values[key]
    return out


_MISSING: Any = object()


def _fill_property(prop: str, schema: dict[str, Any], values: dict[str, Any]) -> Any:
    kind = _schema_type(schema)
    if prop in ("questions",) and kind == "array":
        item = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        return [_fill_object(item or {}, values)]
    if prop in ("options", "choices") and kind == "array" and "options" in values:
        item = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        if _schema_type(item or {}) == "object":
            return [
                _fill_object(item or {}, {"label": o, "description": o}) for o in values["options"]
            ]
        return list(values["options"])
    if prop in ("multiSelect", "multiple", "multi_select") and "options" in values:
        return False
    for key, aliases in _ALIASES.items():
        if prop in aliases and key in values:
            value = values[key]
            if kind == "array" and isinstance(value, str):
                return ["bash", "-lc", value] if key == "command" else [value]
            return value
    if kind == "array" and prop in ("edits",) and ("old" in values or "new" in values):
        item = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        return [_fill_object(item or {}, values)]
    return _MISSING


def _placeholder(schema: dict[str, Any]) -> Any:
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = _schema_type(schema)
    return {
        "string": "fake",
        "integer": 1,
        "number": 1,
        "boolean": False,
        "array": [],
        "object": {},
    }.get(kind, "fake")
