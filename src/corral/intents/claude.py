"""Claude Code and Qwen Code (stream-json): an intent as a permission mode, generated settings
allow/deny rules and disallowed tools.

Claude Code's rules are ``Tool`` or ``Bash(prefix:*)``; deny rules win over allow rules and over
every mode. A prefix rule never covers a compound command (``a && b``), so allow rules are safe as
prefixes. Anything neither allowed nor denied is asked of the host over the control channel
(``--permission-prompt-tool stdio``), where corral's guard answers it (:mod:`._guard`): that is how
``git push`` is allowed under act-pr while ``git push origin +main`` is not — no prefix rule can
tell those two apart.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from ._render import Rendering
from ._table import (
    FORCE_PUSH_SPELLINGS,
    HISTORY_REWRITE_COMMANDS,
    INTENTS,
    LOCAL_GIT_COMMANDS,
    PR_READ_COMMANDS,
    PR_VERDICT_COMMANDS,
    Intent,
)

EDIT_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")

MODES: dict[Intent, str] = {
    Intent.ASK: "plan",
    Intent.REVIEW: "default",
    Intent.WORK: "acceptEdits",
    Intent.ACT_PR: "acceptEdits",
    Intent.FULL: "bypassPermissions",
}
"""Claude Code's permission mode per intent (seed 001 maps Ask to plan)."""


def bash_rule(prefix: str) -> str:
    """``git commit`` → ``Bash(git commit:*)``."""
    return f"Bash({prefix}:*)"


def rules(intent: Intent, allowed_commands: Sequence[str]) -> dict[str, list[str]]:
    """The ``permissions`` block (allow and deny rules) for ``intent``."""
    spec = INTENTS[intent]
    allow: list[str] = []
    deny: list[str] = []
    if intent is Intent.FULL:
        return {"allow": allow, "deny": deny}
    if not spec.edits:
        deny += EDIT_TOOLS
    if intent is Intent.REVIEW:
        allow += [bash_rule(c) for c in (*PR_READ_COMMANDS, *PR_VERDICT_COMMANDS)]
    if intent in (Intent.WORK, Intent.ACT_PR):
        allow += [bash_rule(c) for c in LOCAL_GIT_COMMANDS if c != "git push"]
        allow += [bash_rule(c) for c in allowed_commands]
    if intent is Intent.ACT_PR:
        allow += [bash_rule(c) for c in ("git fetch", "git merge", "gh api", *PR_READ_COMMANDS)]
        deny += [bash_rule(c) for c in (*HISTORY_REWRITE_COMMANDS, *FORCE_PUSH_SPELLINGS[:4])]
    else:
        deny += [bash_rule(c) for c in ("git push", *HISTORY_REWRITE_COMMANDS)]
    if intent in (Intent.ASK, Intent.REVIEW):
        deny += [bash_rule("git commit")]
    return {"allow": allow, "deny": deny}


def render(intent: Intent, allowed_commands: Sequence[str], cwd: str) -> Rendering:
    """Claude Code: ``--permission-mode``, ``--settings`` with the rules, ``--disallowedTools``."""
    argv: list[str] = []
    perms = rules(intent, allowed_commands)
    if perms["allow"] or perms["deny"]:
        settings = {"permissions": perms}
        argv += ["--settings", msgspec.json.encode(settings).decode()]
    if not INTENTS[intent].edits:
        argv += ["--disallowedTools", ",".join(EDIT_TOOLS)]
    return Rendering(intent=intent, argv=tuple(argv), settings={"permission_mode": MODES[intent]})


QWEN_MODES: dict[Intent, str] = {
    Intent.ASK: "plan",
    Intent.REVIEW: "default",
    Intent.WORK: "auto-edit",
    Intent.ACT_PR: "auto-edit",
    Intent.FULL: "yolo",
}
"""Qwen Code's ``--approval-mode`` per intent."""

QWEN_EDIT_TOOLS = ("write_file", "edit", "replace")


def render_qwen(intent: Intent, allowed_commands: Sequence[str], cwd: str) -> Rendering:
    """Qwen Code (stream-json or ACP): ``--approval-mode`` and ``--exclude-tools`` for edits."""
    argv: list[str] = []
    if not INTENTS[intent].edits:
        argv += ["--exclude-tools", ",".join(QWEN_EDIT_TOOLS)]
    return Rendering(
        intent=intent, argv=tuple(argv), settings={"permission_mode": QWEN_MODES[intent]}
    )
