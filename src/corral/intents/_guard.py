"""corral's own check of an approval request against an intent (defence in depth).

Every vendor rendering tries to make the agent itself refuse what an intent forbids. Some vendors
still ask the host (Claude Code in plan mode hands the decision to whoever answers its permission
prompt), so the session and run paths check each ``ApprovalRequested`` here first: a forbidden
action is denied by corral and never shown as a card, whatever the host would have answered.

The check is conservative: a command is allowed only when it is granted word for word by the
intent's table (see :mod:`corral.intents._table`) and contains no shell operator; a shell wrapper
(``sh -c '…'``, ``bash -lc '…'``) is unwrapped and its inner command checked the same way.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Sequence
from typing import Any

import msgspec

from ..events import ApprovalRequested, ToolCallStarted, ToolKind
from ._table import (
    INTENTS,
    READ_ONLY_COMMANDS,
    SHELL_OPERATORS,
    WRITING_OPTIONS,
    Intent,
    granted_commands,
)

SHELLS = frozenset({"sh", "bash", "zsh", "dash"})
EDIT_TOOL_NAMES = frozenset(
    {
        "write",
        "edit",
        "multiedit",
        "notebookedit",
        "apply_patch",
        "write_file",
        "create_file",
        "replace",
        "patch",
        "str_replace",
        "edit_file",
    }
)
SHELL_TOOL_NAMES = frozenset(
    {"bash", "shell", "run_shell_command", "exec_command", "shell_command", "terminal"}
)
READ_TOOL_NAMES = frozenset(
    {"read", "read_file", "glob", "grep", "ls", "list", "view", "search", "find"}
)


class Verdict(msgspec.Struct, frozen=True, kw_only=True):
    """Whether an intent allows one action, and why."""

    allowed: bool
    reason: str


def _deny(reason: str) -> Verdict:
    return Verdict(allowed=False, reason=reason)


def _allow(reason: str) -> Verdict:
    return Verdict(allowed=True, reason=reason)


def _starts_with(words: Sequence[str], prefix: str) -> bool:
    head = prefix.split()
    return list(words[: len(head)]) == head


def is_force_push(words: Sequence[str]) -> bool:
    """Whether ``git push …`` (split into words) force-pushes or deletes on the remote, by any
    spelling: ``--force``, ``-f`` (also inside ``-uf``), ``--force-with-lease``,
    ``--force-if-includes``, ``--mirror``, ``--delete``/``-d``, ``--prune``, a ``+refspec`` or a
    ``:ref`` deletion."""
    if len(words) < 2 or words[0] != "git" or words[1] != "push":
        return False
    for arg in words[2:]:
        if arg.startswith("--"):
            name = arg.split("=", 1)[0]
            if name.startswith("--force") or name in ("--mirror", "--delete", "--prune"):
                return True
        elif arg.startswith("-") and len(arg) > 1:
            if "f" in arg[1:] or "d" in arg[1:]:
                return True
        elif arg.startswith("+") or arg.startswith(":") or ":+" in arg:
            return True
    return False


def check_command(
    intent: Intent, allowed_commands: Sequence[str], command: str | Sequence[str]
) -> Verdict:
    """Whether ``intent`` lets the shell run ``command`` (a string or an argv list)."""
    spec = INTENTS[intent]
    if spec.any_command:
        return _allow("full access")
    if isinstance(command, str):
        text = command.strip()
        if not text:
            return _deny("empty command")
        if any(op in text for op in SHELL_OPERATORS):
            return _deny(f"{intent} grants no command with a shell operator")
        try:
            words = shlex.split(text)
        except ValueError:
            return _deny("the command could not be parsed")
    else:
        words = [str(w) for w in command]
        if any(op in w for w in words for op in SHELL_OPERATORS) and not _is_wrapper(words):
            return _deny(f"{intent} grants no command with a shell operator")
    if not words:
        return _deny("empty command")
    if _is_wrapper(words):
        return check_command(intent, allowed_commands, words[-1])
    if "=" in words[0]:
        return _deny("a command starting with an environment assignment is never granted")
    if words[0] == "git" and len(words) > 1 and words[1].startswith("-"):
        return _deny("git with global options (-C, -c …) is never granted")
    if is_force_push(words):
        return _deny("force-push (or a remote deletion) is denied under every intent but full")
    for denied in spec.denied:
        if _starts_with(words, denied):
            return _deny(f"{denied!r} is denied under {intent}")
    for granted in granted_commands(intent, allowed_commands):
        if _starts_with(words, granted):
            if granted in READ_ONLY_COMMANDS and any(
                w == opt or w.startswith(opt + "=") or (opt == "-o" and w.startswith("-o"))
                for w in words[1:]
                for opt in (*WRITING_OPTIONS, "--pre")
            ):
                return _deny(f"{granted!r} with an option that writes or runs a program")
            return _allow(f"{granted!r} is granted by {intent}")
    return _deny(f"{' '.join(words)[:80]!r} is not granted by {intent}")


def _is_wrapper(words: Sequence[str]) -> bool:
    return (
        len(words) == 3
        and posixpath.basename(words[0]) in SHELLS
        and words[1] in ("-c", "-lc", "-cl")
    )


def command_of(value: Any) -> str | list[str] | None:
    """The shell command in a tool input (``command`` / ``cmd``, a string or an argv list)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    if isinstance(value, dict):
        for key in ("command", "cmd", "commands", "script"):
            if key in value:
                found = command_of(value[key])
                if found is not None:
                    return found
    return None


def _path_of(value: Any) -> str | None:
    if isinstance(value, dict):
        for key in ("file_path", "filePath", "path", "file"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return None


def check_tool(
    intent: Intent,
    allowed_commands: Sequence[str],
    *,
    tool_name: str,
    kind: ToolKind = ToolKind.OTHER,
    cmd: str | None = None,
    tool_input: Any = None,
) -> Verdict:
    """Whether ``intent`` allows one tool call, classified by its kind, its name and its command."""
    spec = INTENTS[intent]
    if spec.any_command:
        return _allow("full access")
    name = tool_name.rsplit("__", 1)[-1].lower()
    if kind is ToolKind.EDIT or name in EDIT_TOOL_NAMES:
        return _allow("edits are granted") if spec.edits else _deny(f"{intent} grants no edits")
    if kind in (ToolKind.COMMAND, ToolKind.TEST) or name in SHELL_TOOL_NAMES:
        command = cmd if cmd else command_of(tool_input)
        if command is None:
            return _deny("a shell call whose command could not be read")
        return check_command(intent, allowed_commands, command)
    if kind in (ToolKind.READ, ToolKind.SEARCH) or name in READ_TOOL_NAMES:
        return _allow("reading is granted")
    if kind is ToolKind.WEB:
        return _deny(f"{intent} grants no web access") if not spec.edits else _allow("web")
    if kind is ToolKind.SUBAGENT:
        return _allow("a sub-agent's own calls are checked one by one")
    return _deny(f"{tool_name!r} is not granted by {intent}")


def check_approval(
    intent: Intent, allowed_commands: Sequence[str], event: ApprovalRequested
) -> Verdict:
    """:func:`check_tool` for an ``ApprovalRequested`` event."""
    return check_tool(
        intent,
        allowed_commands,
        tool_name=event.tool_name,
        kind=event.kind,
        cmd=event.cmd,
        tool_input=event.input,
    )


class ApprovalGuard(msgspec.Struct, frozen=True, kw_only=True):
    """An intent and the project's allowed commands, checking approval requests (see module doc)."""

    intent: Intent
    allowed_commands: tuple[str, ...] = ()

    def check(self, event: ApprovalRequested) -> Verdict:
        return check_approval(self.intent, self.allowed_commands, event)

    def forbidden_call(self, call: ToolCallStarted) -> str | None:
        """Why the intent forbids this tool call (``None`` when it grants it). Used to say *why* a
        call the vendor itself refused failed — it never asked, so no approval came through."""
        verdict = check_tool(
            self.intent,
            self.allowed_commands,
            tool_name=call.name,
            kind=call.kind,
            cmd=call.cmd,
            tool_input=call.input,
        )
        if verdict.allowed:
            return None
        what = call.cmd or call.file or _path_of(call.input) or call.title or call.name
        return f"{what} was denied under intent {self.intent}: {verdict.reason}"

    def denial_message(self, event: ApprovalRequested, verdict: Verdict) -> str:
        """What the agent is told (and the transcript shows) when corral denies ``event``."""
        what = event.cmd or event.file or event.title or event.tool_name
        return f"Denied by corral under intent {self.intent}: {what} — {verdict.reason}"
