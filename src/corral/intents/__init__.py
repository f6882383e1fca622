"""One permission vocabulary: ask / review / work / act-pr / full (see docs/intents.md).

* :mod:`._table` — the intents and what each grants, as data;
* :mod:`._guard` — corral's own check of an approval request against an intent;
* one module per vendor (``claude``, ``codex``, ``acp``, ``opencode``, ``unguarded``) — pure
  renderings of an intent into that vendor's permission rules.

Adapters declare the intents they can enforce (``enforceable_intents``); an intent an adapter
cannot enforce is refused at launch with :class:`corral.errors.IntentRefused`.
"""

from __future__ import annotations

from ._guard import ApprovalGuard, Verdict, check_approval, check_command, check_tool, is_force_push
from ._render import Renderer, Rendering, refusals
from ._table import (
    INTENTS,
    Intent,
    IntentSpec,
    granted_commands,
    parse_allowed_commands,
    parse_intent,
)

__all__ = [
    "INTENTS",
    "ApprovalGuard",
    "Intent",
    "IntentSpec",
    "Renderer",
    "Rendering",
    "Verdict",
    "check_approval",
    "check_command",
    "check_tool",
    "granted_commands",
    "is_force_push",
    "parse_allowed_commands",
    "parse_intent",
    "refusals",
]
