"""Request bodies for the OpenCode server: prompt parts and permission rulesets (pure)."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .base import Attachment


def _rules(*rules: tuple[str, str]) -> list[dict[str, str]]:
    return [{"permission": p, "pattern": "*", "action": a} for p, a in rules]


# OpenCode applies the last matching rule, so the catch-all comes first.
PERMISSION_MODES: dict[str, list[dict[str, str]]] = {
    "ask": _rules(("*", "ask")),
    "allow": _rules(("*", "allow")),
    "deny": _rules(("*", "deny")),
    # Claude Code's vocabulary, which corral run and the shared recorder scenarios speak:
    "default": _rules(("*", "ask")),
    "acceptEdits": _rules(("*", "ask"), ("edit", "allow")),
    "bypassPermissions": _rules(("*", "allow")),
    "plan": _rules(("*", "allow"), ("edit", "deny"), ("bash", "deny")),
}
"""corral permission mode → the session's ``permission`` ruleset."""


def permission_ruleset(mode: str) -> list[dict[str, str]]:
    """The session ruleset for a permission mode (see ``PERMISSION_MODES``)."""
    try:
        return [dict(rule) for rule in PERMISSION_MODES[mode]]
    except KeyError:
        raise ConfigError(
            f"permission mode {mode!r} is not one of {', '.join(PERMISSION_MODES)}"
        ) from None


def prompt_parts(text: str, attachments: Sequence[Attachment] = ()) -> list[dict[str, Any]]:
    """The ``parts`` of a prompt: the text, then each attachment as a ``data:`` URL file part."""
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
    for att in attachments:
        if att.path is not None and att.data is None:
            url = Path(att.path).resolve().as_uri()
        else:
            url = f"data:{att.media_type};base64,{base64.b64encode(att.read_bytes()).decode()}"
        name = att.name or (Path(att.path).name if att.path else "attachment")
        parts.append({"type": "file", "mime": att.media_type, "filename": name, "url": url})
    return parts
