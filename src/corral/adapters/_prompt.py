"""The prompt check every driver, session and run applies before a prompt reaches an agent
(described in :mod:`._turns`); light, so ``corral run`` can apply it before its early spawn."""

from __future__ import annotations

from ..errors import InvalidPromptError

TYPE_CHECKING = False  # ``typing`` itself costs start-up (decision 036)
if TYPE_CHECKING:
    from collections.abc import Sequence

MAX_PROMPT_CHARS = 4 * 1024 * 1024
"""Longest prompt accepted (characters)."""


def check_prompt(text: object, attachments: Sequence[object] | None = None) -> str:
    """``text`` if it may be sent to an agent; else :class:`InvalidPromptError` saying why."""
    if not isinstance(text, str):
        raise InvalidPromptError(f"the prompt must be text, not {type(text).__name__}")
    if not text.strip() and not attachments:
        raise InvalidPromptError(
            "the prompt is empty" if not text else "the prompt is only whitespace"
        )
    if len(text) > MAX_PROMPT_CHARS:
        raise InvalidPromptError(f"the prompt is longer than {MAX_PROMPT_CHARS} characters")
    if "\x00" in text:
        raise InvalidPromptError("the prompt contains a NUL character")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidPromptError(
            "the prompt contains a lone surrogate (not valid Unicode)"
        ) from None
    return text
