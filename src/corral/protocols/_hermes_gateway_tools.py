"""Tool calls and approvals of the Hermes TUI gateway → corral events (for
:mod:`corral.protocols.hermes_gateway`; hermes-agent 0.19.0, ``tui_gateway/server.py``)."""

from __future__ import annotations

import json
import re
from typing import Any

from ..events import (
    ApprovalDecision,
    ApprovalOption,
    ApprovalRequested,
    Event,
    FileDiff,
    ToolCallCompleted,
    ToolCallFailed,
    ToolKind,
    ToolResult,
)
from ._total import mapping, sequence, text_or_none

KINDS = {
    "write_file": ToolKind.EDIT,
    "patch": ToolKind.EDIT,
    "read_file": ToolKind.READ,
    "search_files": ToolKind.SEARCH,
    "terminal": ToolKind.COMMAND,
    "process": ToolKind.COMMAND,
    "execute_code": ToolKind.COMMAND,
    "web_search": ToolKind.WEB,
    "web_extract": ToolKind.WEB,
    "delegate_task": ToolKind.SUBAGENT,
}
"""Hermes's tool names and the kind of each (any other tool is ``other``)."""
CHOICE_DECISIONS = {
    "once": ApprovalDecision.ALLOW,
    "session": ApprovalDecision.ALLOW_ALWAYS,
    "always": ApprovalDecision.ALLOW_ALWAYS,
    "deny": ApprovalDecision.DENY,
}
"""The gateway's approval choices and the corral decision each one is."""
_LABELS = {
    "once": "Allow once",
    "session": "Allow for this session",
    "always": "Always allow",
    "deny": "Deny",
}
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def tool_completed(call_id: str, name: str, payload: dict[str, Any], raw: Any) -> list[Event]:
    """``tool.complete``: completed, or failed (``denied`` when Hermes blocked it), plus a
    ``FileDiff`` for an edit (``inline_diff`` with its terminal colours stripped)."""
    kind = KINDS.get(name, ToolKind.OTHER)
    args = mapping(payload.get("args"))
    result = payload.get("result")
    fields = mapping(result)
    output = _output(result)
    error = text_or_none(fields.get("error"))
    if fields.get("status") == "blocked" or (error and not text_or_none(fields.get("output"))):
        return [
            ToolCallFailed(
                call_id=call_id,
                error=error or "the tool call was blocked",
                denied=fields.get("status") == "blocked",
                result=ToolResult(output=output, structured=result, is_error=True),
                name=name,
                kind=kind,
                raw=raw,
            )
        ]
    out: list[Event] = [
        ToolCallCompleted(
            call_id=call_id,
            result=ToolResult(output=output, structured=result),
            name=name,
            kind=kind,
            raw=raw,
        )
    ]
    path = text_or_none(args.get("path"))
    if kind is ToolKind.EDIT and path:
        inline = text_or_none(payload.get("inline_diff"))
        content = text_or_none(args.get("content")) if name == "write_file" else None
        out.append(
            FileDiff(
                path=path,
                diff=_ANSI.sub("", inline) if inline else None,
                new_text=content,
                call_id=call_id,
                raw=raw,
            )
        )
    return out


def approval_choices(payload: dict[str, Any]) -> tuple[str, ...]:
    """The known choices an ``approval.request`` offers (``once``/``deny`` when it lists none)."""
    choices = tuple(c for c in sequence(payload.get("choices")) if c in CHOICE_DECISIONS)
    return choices or ("once", "deny")


def approval_requested(
    request_id: str,
    payload: dict[str, Any],
    *,
    choices: tuple[str, ...],
    call_id: str | None,
    tool_name: str,
    raw: Any,
) -> ApprovalRequested:
    command = text_or_none(payload.get("command"))
    return ApprovalRequested(
        request_id=request_id,
        tool_name=tool_name,
        kind=ToolKind.COMMAND,
        title=text_or_none(payload.get("description")),
        input={"command": command} if command is not None else None,
        call_id=call_id,
        cmd=command,
        options=tuple(
            ApprovalOption(id=c, label=_LABELS[c], decision=CHOICE_DECISIONS[c]) for c in choices
        ),
        raw=raw,
    )


def _output(result: Any) -> str:
    """A tool result as text: the command's ``output``, else the result as JSON."""
    if type(result) is str:
        return result
    fields = mapping(result)
    if type(fields.get("output")) is str:
        return str(fields["output"])
    try:
        return json.dumps(result, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return ""
