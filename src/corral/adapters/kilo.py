"""Kilo over ACP: ``kilo acp`` (Kilo is an OpenCode descendant; agent id ``kilo``).

Kilo 7.7.7 offers both of OpenCode's structured modes, ``kilo serve`` (HTTP + SSE) and ``kilo acp``.
corral drives ``kilo acp`` through the shared ACP driver: the serve mode reads its password and
options from ``KILO_*`` variables the OpenCode server driver does not set, while ACP needs nothing
but the launch (decision record 028). The provider and model come from ``KILO_CONFIG_CONTENT``
(:mod:`corral.redirect.kilo`); ``kilo acp`` takes no model flag.

Over ACP the client is the approval surface, so edits, shell commands and fetches are set to
``ask`` through ``KILO_PERMISSION`` (merged over every config file, as OpenCode's
``OPENCODE_PERMISSION``); a caller that wants Kilo's own configuration to decide passes
``KILO_PERMISSION={}`` in ``env``.
"""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import ClassVar

from ..intents import Intent
from ._acp import AcpAdapter


class KiloAdapter(AcpAdapter):
    agent_id = "kilo"
    display_name = "Kilo"
    cli_binary = "kilo"
    acp_args = ("acp",)
    default_env: ClassVar[dict[str, str]] = {
        "KILO_PERMISSION": json.dumps({"edit": "ask", "bash": "ask", "webfetch": "ask"})
    }

    # Each flag below is shown by a passing run of `corral conformance kilo` on 7.7.7.
    cap_permissions = True
    cap_cancel = True
    cap_resume = True
    cap_image_input = True

    # No intent is offered until the intents suite shows the pinned Kilo enforcing it.
    intent_refusals = MappingProxyType(
        {
            i.value: "no run of the pinned Kilo 7.7.7 has shown this intent enforced yet"
            for i in Intent
        }
    )

    provides_models = True
    provides_usage = True
