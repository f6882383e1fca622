"""The one permission knob the commands share: ``--intent`` and ``--allowed-commands``."""

from __future__ import annotations

import typer

from ..errors import ConfigError
from ..intents import parse_allowed_commands

INTENT_HELP = (
    "ask | review | work | act-pr | full (docs/intents.md). Refused (exit 5) where the agent "
    "cannot enforce it; absent: the agent's own default. full is never a default."
)
ALLOWED_COMMANDS_HELP = (
    "The project's allowed command prefixes, comma-separated (e.g. 'python3 -m unittest,npm test'),"
    " granted under --intent work and act-pr."
)
VENDOR_MODE_HELP = (
    "Escape hatch: the agent's own permission-mode word, passed through untranslated "
    "(e.g. Claude Code's acceptEdits). Not combinable with --intent."
)


def intent_option() -> str | None:
    return typer.Option(None, "--intent", help=INTENT_HELP)  # type: ignore[no-any-return]


def allowed_commands_option() -> str | None:
    return typer.Option(None, "--allowed-commands", help=ALLOWED_COMMANDS_HELP)  # type: ignore[no-any-return]


def parse_commands(value: str | None) -> tuple[str, ...]:
    """``--allowed-commands`` → prefixes; a bad one is a usage error (exit 2)."""
    try:
        return parse_allowed_commands(value)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
