"""The shell grade's conformance targets: aider, Claude Code and Codex driven through a terminal.

A terminal shows what a person sees, so the scenarios that need structure no screen carries are
``unsupported`` with the reason; ``text``, ``follow-up`` and ``cancel-mid-turn`` run on the real
CLIs. Rows are keyword arguments of :class:`~corral.testing.conformance._targets.TargetSpec`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...redirect.tui import claude_first_run, codex_first_run

_NO_TOOLS = (
    "shell grade: a terminal shows a tool call as drawn text, not as tool.started/tool.completed "
    "events (use the structured adapter)"
)
_SHELL_UNSUPPORTED = {
    "tool-write": _NO_TOOLS,
    "tool-shell": _NO_TOOLS,
    "approval-allow": "shell grade: an approval is a dialog on the screen; corral does not answer "
    "it by keystrokes",
    "approval-deny": "shell grade: an approval is a dialog on the screen; corral does not answer "
    "it by keystrokes",
    "question": "shell grade: a question is text on the screen, not a question.asked event",
    "input-during-turn": "shell grade: one prompt at a time (a prompt typed mid-turn is refused)",
    "resume-after-exit": "shell grade: no session id is read from the screen",
    "image-input": "shell grade: a terminal takes text only (attachments are refused)",
    "usage": "shell grade: token counts are drawn text, not usage events",
    "error-429": "shell grade: a provider error is drawn text; the turn cannot tell it from an "
    "answer",
}


def _claude_prepare(home: Path, cwd: Path) -> None:
    claude_first_run(home=home, cwd=cwd, api_key="test").apply()


def _codex_prepare(home: Path, cwd: Path) -> None:
    codex_first_run(home=home, cwd=cwd).apply()


SHELL_TARGETS: list[dict[str, Any]] = [
    {
        "agent": "aider-shell",
        "adapter": "aider-shell",
        "redirect": "aider",
        "unsupported": _SHELL_UNSUPPORTED,
        "turn_timeout": 90.0,
        # aider names a model by its litellm provider; the redirection uses "openai/".
        "model": "openai/fake-model",
    },
    {
        "agent": "claude-tui",
        "adapter": "claude-tui",
        "redirect": "claude",
        "unsupported": _SHELL_UNSUPPORTED,
        "turn_timeout": 90.0,
        "prepare": _claude_prepare,
    },
    {
        "agent": "codex-tui",
        "adapter": "codex-tui",
        "redirect": "codex",
        "unsupported": _SHELL_UNSUPPORTED,
        "turn_timeout": 90.0,
        "prepare": _codex_prepare,
    },
]
"""One row per shell-grade target."""
