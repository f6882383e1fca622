"""The five intents and what each one grants, as data (the table docs/intents.md shows).

An intent is what a person means to let an agent do; each adapter renders it into its vendor's
permission rules (see the per-vendor modules beside this one), and corral's own approval guard
(:mod:`corral.intents._guard`) checks every approval request against the same table, whatever the
vendor or the host would have answered.

Commands are matched as **word prefixes** (``git commit`` matches ``git commit -m x``, never
``git commit-tree``), after the command was split like a POSIX shell would; a command with any shell
operator (``;``, ``&``, ``|``, ``>``, ``<``, backticks, ``$(``, a newline) is never matched by a grant.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

import msgspec


class Intent(StrEnum):
    """What the agent may do in a session or a run (seed 001's Ask plus seed 002's launch intents)."""

    ASK = "ask"
    """Strictly read-only: no edits, no writing shell, no committing or pushing."""
    REVIEW = "review"
    """Read-only working tree; may read a PR and post the verdict (``gh pr review|comment``)."""
    WORK = "work"
    """Edit files, local git bookkeeping and the project's allowed commands; no push."""
    ACT_PR = "act-pr"
    """Work plus ``git push``, ``git fetch``, ``git merge`` and reading the PR; never a rebase or a
    force-push."""
    FULL = "full"
    """The vendor's own full access. Never a default: always an explicit opt-in."""


class IntentSpec(msgspec.Struct, frozen=True, kw_only=True):
    """What one intent grants: file edits or not, and the shell commands (word prefixes) it allows."""

    intent: Intent
    summary: str
    edits: bool
    """Whether file-editing tools (write, edit, patch) may run."""
    commands: tuple[str, ...]
    """Command prefixes granted (before the project's allowed commands are added)."""
    project_commands: bool
    """Whether the project's allowed commands (``AGENT_COMMANDS``) are granted too."""
    denied: tuple[str, ...] = ()
    """Command prefixes denied explicitly, even where a grant above would cover them."""
    any_command: bool = False
    """``full`` only: every command."""


READ_ONLY_COMMANDS: tuple[str, ...] = (
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "rg",
    "pwd",
    "git status",
    "git log",
    "git diff",
    "git show",
)
"""Commands that only read (with no ``--output`` option, see :data:`WRITING_OPTIONS`)."""

WRITING_OPTIONS: tuple[str, ...] = ("--output", "-o", "--ext-diff", "--textconv")
"""Options that make an otherwise read-only command write a file or run a program."""

PR_READ_COMMANDS = ("gh pr view", "gh pr diff")
PR_VERDICT_COMMANDS = ("gh pr review", "gh pr comment")
LOCAL_GIT_COMMANDS = ("git add", "git commit", "git status", "git diff")
PUBLISH_COMMANDS = ("git push", "git fetch", "git merge", "gh api")

FORCE_PUSH_SPELLINGS: tuple[str, ...] = (
    "git push --force",
    "git push -f",
    "git push --force-with-lease",
    "git push --force-if-includes",
    "git push origin +main",
)
"""The force-push spellings act-pr denies explicitly (``+refspec`` stands for any ``+`` refspec);
:func:`corral.intents.is_force_push` recognises each anywhere in the argument list."""

HISTORY_REWRITE_COMMANDS = ("git rebase",)

INTENTS: dict[Intent, IntentSpec] = {
    Intent.ASK: IntentSpec(
        intent=Intent.ASK,
        summary="strictly read-only",
        edits=False,
        commands=READ_ONLY_COMMANDS,
        project_commands=False,
        denied=("git commit", "git push", *HISTORY_REWRITE_COMMANDS),
    ),
    Intent.REVIEW: IntentSpec(
        intent=Intent.REVIEW,
        summary="read-only working tree; read a PR, post the verdict",
        edits=False,
        commands=(*READ_ONLY_COMMANDS, *PR_READ_COMMANDS, *PR_VERDICT_COMMANDS),
        project_commands=False,
        denied=("git commit", "git push", *HISTORY_REWRITE_COMMANDS),
    ),
    Intent.WORK: IntentSpec(
        intent=Intent.WORK,
        summary="edit, local git bookkeeping, the project's allowed commands; no push",
        edits=True,
        commands=(*READ_ONLY_COMMANDS, *LOCAL_GIT_COMMANDS),
        project_commands=True,
        denied=("git push", *HISTORY_REWRITE_COMMANDS),
    ),
    Intent.ACT_PR: IntentSpec(
        intent=Intent.ACT_PR,
        summary="work plus push, fetch, merge and reading the PR; no rebase, no force-push",
        edits=True,
        commands=(
            *READ_ONLY_COMMANDS,
            *LOCAL_GIT_COMMANDS,
            *PUBLISH_COMMANDS,
            *PR_READ_COMMANDS,
        ),
        project_commands=True,
        denied=(*HISTORY_REWRITE_COMMANDS, *FORCE_PUSH_SPELLINGS[:4]),
    ),
    Intent.FULL: IntentSpec(
        intent=Intent.FULL,
        summary="the vendor's own full access (explicit opt-in only)",
        edits=True,
        commands=(),
        project_commands=True,
        any_command=True,
    ),
}
"""The one table of intents."""


def parse_intent(value: str | Intent | None) -> Intent | None:
    """``"act-pr"`` → ``Intent.ACT_PR``; ``None`` stays ``None``; anything else is a ``ValueError``."""
    if value is None or isinstance(value, Intent):
        return value
    try:
        return Intent(value.strip().lower())
    except ValueError:
        choices = ", ".join(i.value for i in Intent)
        raise ValueError(f"unknown intent {value!r} (choose one of {choices})") from None


def parse_allowed_commands(value: str | Iterable[str] | None) -> tuple[str, ...]:
    """Seed 002's ``AGENT_COMMANDS``: comma-separated plain command prefixes, normalised.

    ``"python3 -m unittest, npm test"`` → ``("python3 -m unittest", "npm test")``. Empty parts are
    dropped; a prefix with a shell operator is refused (``ValueError``): it could never match safely.
    """
    if value is None:
        return ()
    parts = value.split(",") if isinstance(value, str) else list(value)
    out: list[str] = []
    for part in parts:
        words = " ".join(part.split())
        if not words:
            continue
        if any(op in words for op in SHELL_OPERATORS):
            raise ValueError(f"allowed command {words!r} contains a shell operator")
        if words not in out:
            out.append(words)
    return tuple(out)


SHELL_OPERATORS: tuple[str, ...] = (";", "&", "|", ">", "<", "`", "$(", "\n", "\r")
"""A command containing any of these is never granted by a prefix (it is more than one command, or
redirects output)."""


def granted_commands(intent: Intent, allowed_commands: Iterable[str] = ()) -> tuple[str, ...]:
    """Every command prefix ``intent`` grants, the project's allowed commands included."""
    spec = INTENTS[intent]
    extra = tuple(allowed_commands) if spec.project_commands else ()
    return tuple(dict.fromkeys((*spec.commands, *extra)))
