"""Pure pieces of the stream-json wire: user content blocks, session permission rules, and what a
line that is not the protocol becomes."""

from __future__ import annotations

import base64
from typing import Any

from ..events import ErrorEvent, Event, WarningEvent
from .base import Attachment


def attachment_block(att: Attachment) -> dict[str, Any]:
    data = base64.b64encode(att.read_bytes()).decode("ascii")
    source = {"type": "base64", "media_type": att.media_type, "data": data}
    if att.is_image:
        return {"type": "image", "source": source}
    if att.media_type == "application/pdf":
        return {"type": "document", "source": source}
    text = att.read_bytes().decode("utf-8", errors="replace")
    return {
        "type": "text",
        "text": f"<file name={att.name or att.path or 'attachment'!r}>\n{text}\n</file>",
    }


def session_permissions(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Rules that make "allow for this session" stick: the CLI's own suggestions, kept to the session."""
    rules: list[dict[str, Any]] = []
    for suggestion in request.get("permission_suggestions") or ():
        if isinstance(suggestion, dict) and suggestion.get("type") in (
            "addRules",
            "replaceRules",
            "setMode",
            "addDirectories",
        ):
            rules.append({**suggestion, "destination": "session"})
    if not rules:
        rules.append(
            {
                "type": "addRules",
                "rules": [{"toolName": request.get("tool_name", "")}],
                "behavior": "allow",
                "destination": "session",
            }
        )
    return rules


def bad_line(line: bytes) -> Event:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return ErrorEvent(
            message=f"the agent printed {len(line)} bytes of binary data", code="binary_output"
        )
    if text.startswith("{"):
        return ErrorEvent(
            message=f"truncated or invalid JSON from the agent: {text[:120]!r}", code="invalid_json"
        )
    return WarningEvent(message=f"non-protocol output: {text[:200]}", code="non_json_output")
