"""OpenCode (serve + SSE, and ACP): an intent as a ``permission`` config, wildcard rules, last
match wins (so the catch-all comes first and the denials last).

The rules go into ``OPENCODE_PERMISSION`` (a JSON object opencode merges over its configuration's
``permission`` key), so they combine with whatever provider configuration the redirection set. A denied edit removes
opencode's write/edit tools; a denied command is refused by opencode itself; what asks reaches
corral's guard. Proven on opencode 1.18.33 (serve and ACP) by tests/realcli/test_intents.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from ._render import Rendering
from ._table import FORCE_PUSH_SPELLINGS, INTENTS, Intent, granted_commands


def permission(intent: Intent, allowed_commands: Sequence[str]) -> dict[str, Any]:
    """The ``permission`` object for ``intent``."""
    spec = INTENTS[intent]
    if spec.any_command:
        return {"edit": "allow", "bash": "allow", "webfetch": "allow"}
    bash: dict[str, str] = {"*": "deny"}
    for prefix in granted_commands(intent, allowed_commands):
        bash[prefix] = "allow"
        bash[f"{prefix} *"] = "allow"
    for prefix in spec.denied:
        bash[prefix] = "deny"
        bash[f"{prefix} *"] = "deny"
    if intent is Intent.ACT_PR:
        for spelling in FORCE_PUSH_SPELLINGS[:4]:
            bash[f"{spelling} *"] = "deny"
            bash[f"git push * {spelling.removeprefix('git push ')}*"] = "deny"
        bash["git push *+*"] = "deny"
    return {
        "edit": "allow" if spec.edits else "deny",
        "bash": bash,
        "webfetch": "allow" if spec.edits else "deny",
    }


def render(intent: Intent, allowed_commands: Sequence[str], cwd: str) -> Rendering:
    rules = msgspec.json.encode(permission(intent, allowed_commands)).decode()
    return Rendering(intent=intent, env={"OPENCODE_PERMISSION": rules})
