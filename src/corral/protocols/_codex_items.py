"""Codex app-server ``ThreadItem``s that are tool calls → tool events (shared by the parser)."""

from __future__ import annotations

from typing import Any

from ..events import FileDiff, ToolCallStarted, ToolKind
from ._codex_vocab import command_kind
from ._diff import unified
from ._total import sequence


def file_diff(change: dict[str, Any], call_id: str | None) -> FileDiff:
    """One ``FileUpdateChange``. Codex gives a unified diff for ``update`` but the whole content for
    ``add`` (new text) and ``delete`` (old text); a unified diff is computed for those two."""
    path = str(change.get("path", ""))
    body = change.get("diff")
    kind = change.get("kind")
    kind_type = kind.get("type") if isinstance(kind, dict) else kind
    if not isinstance(body, str) or kind_type not in ("add", "delete"):
        return FileDiff(path=path, diff=body, call_id=call_id, raw=change)
    lines = body.splitlines(keepends=True)
    if kind_type == "add":
        diff = unified([], lines, "/dev/null", path)
        return FileDiff(path=path, diff=diff, new_text=body, call_id=call_id, raw=change)
    diff = unified(lines, [], path, "/dev/null")
    return FileDiff(path=path, diff=diff, old_text=body, call_id=call_id, raw=change)


def mcp_output(result: Any) -> str:
    if not isinstance(result, dict):
        return ""
    texts = [c.get("text", "") for c in sequence(result.get("content")) if isinstance(c, dict)]
    return "\n".join(t for t in texts if t)


def _command(item: dict[str, Any]) -> tuple[str, ToolKind, dict[str, Any], str | None, str | None]:
    cmd = item.get("command") or ""
    return "shell", command_kind(cmd), {"command": cmd, "cwd": item.get("cwd")}, None, cmd


def _file_change(item: dict[str, Any]) -> tuple[str, ToolKind, Any, str | None, str | None]:
    changes = [c for c in sequence(item.get("changes")) if isinstance(c, dict)]
    first = changes[0].get("path") if changes else None
    return "apply_patch", ToolKind.EDIT, {"changes": changes}, first, None


def _mcp(item: dict[str, Any]) -> tuple[str, ToolKind, Any, str | None, str | None]:
    name = f"mcp__{item.get('server')}__{item.get('tool')}"
    return name, ToolKind.MCP, item.get("arguments"), None, None


def _dynamic(item: dict[str, Any]) -> tuple[str, ToolKind, Any, str | None, str | None]:
    return str(item.get("tool") or "tool"), ToolKind.OTHER, item.get("arguments"), None, None


def _web(item: dict[str, Any]) -> tuple[str, ToolKind, Any, str | None, str | None]:
    return "web_search", ToolKind.WEB, {"query": item.get("query")}, None, None


def _collab(item: dict[str, Any]) -> tuple[str, ToolKind, Any, str | None, str | None]:
    return (
        str(item.get("tool") or "agent"),
        ToolKind.SUBAGENT,
        {"prompt": item.get("prompt")},
        None,
        None,
    )


def _image_view(item: dict[str, Any]) -> tuple[str, ToolKind, Any, str | None, str | None]:
    return "view_image", ToolKind.READ, {"path": item.get("path")}, item.get("path"), None


TOOL_ITEMS = {
    "commandExecution": _command,
    "fileChange": _file_change,
    "mcpToolCall": _mcp,
    "dynamicToolCall": _dynamic,
    "webSearch": _web,
    "collabAgentToolCall": _collab,
    "imageView": _image_view,
}


def tool_start(item: dict[str, Any], p: dict[str, Any]) -> ToolCallStarted | None:
    kind = item.get("type")
    describe = TOOL_ITEMS.get(kind) if isinstance(kind, str) else None
    if describe is None:
        return None
    name, kind, tool_input, file, cmd = describe(item)
    return ToolCallStarted(
        call_id=str(item.get("id")),
        name=name,
        kind=kind,
        title=cmd or file or name,
        input=tool_input,
        file=file,
        cmd=cmd,
        raw=p,
    )
