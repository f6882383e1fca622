"""What a vendor rendering of an intent produces, and the refusal when a vendor cannot enforce it.

A renderer is a pure function ``(intent, allowed_commands, cwd) -> Rendering``: no process starts,
no file is written. :func:`corral.adapters.base.construct` merges the result into the adapter's
launch in one place (argv additions, environment, and the adapter's own permission settings).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import msgspec

from ._table import Intent


class Rendering(msgspec.Struct, frozen=True, kw_only=True):
    """One intent in one vendor's words."""

    intent: Intent
    argv: tuple[str, ...] = ()
    """Added to the agent's command line."""
    env: dict[str, str] = msgspec.field(default_factory=dict)
    """Added to the agent's environment."""
    settings: dict[str, Any] = msgspec.field(default_factory=dict)
    """The adapter's own permission settings, by its ``__init__`` argument name (for example
    ``permission_mode``, ``approval_policy``, ``sandbox``, ``config``)."""


Renderer = Callable[[Intent, Sequence[str], str], Rendering]
"""``(intent, allowed_commands, cwd) -> Rendering``."""


def refusals(reason: str, *refused: Intent) -> Mapping[str, str]:
    """``{intent value: reason}`` for the ``refused`` intents (default: every intent but ``full``),
    read-only: an adapter's ``intent_refusals``."""
    chosen = refused or tuple(i for i in Intent if i is not Intent.FULL)
    return MappingProxyType({i.value: reason for i in chosen})
