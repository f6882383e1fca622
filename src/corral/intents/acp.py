"""Gemini CLI and Qwen Code over ACP: an intent as an approval mode plus corral's own answers.

Over ACP corral is the client: every permission request (``session/request_permission``) comes to
corral, where the guard checks it against the intent (:mod:`._guard`). The rendering chooses the
vendor's approval mode so that nothing that needs a check is auto-approved by the agent itself:
``default`` (ask for every edit and every shell call) for all intents but ``full`` (``yolo``).

A shell request the guard cannot read a command from is denied (fail closed): Gemini CLI 0.61's
requests carry only a display title, so Gemini offers ask, review and full but not work/act-pr
(their granted commands could never run). Qwen Code's requests carry the command.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._render import Rendering
from ._table import Intent

GEMINI_MODES: dict[Intent, str] = {
    Intent.ASK: "default",
    Intent.REVIEW: "default",
    Intent.WORK: "default",
    Intent.ACT_PR: "default",
    Intent.FULL: "yolo",
}
QWEN_MODES = GEMINI_MODES


def render_gemini(intent: Intent, allowed_commands: Sequence[str], cwd: str) -> Rendering:
    return Rendering(intent=intent, argv=("--approval-mode", GEMINI_MODES[intent]))


def render_qwen_acp(intent: Intent, allowed_commands: Sequence[str], cwd: str) -> Rendering:
    return Rendering(intent=intent, argv=("--approval-mode", QWEN_MODES[intent]))
