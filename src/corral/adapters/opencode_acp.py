"""OpenCode over ACP: ``opencode acp``.

Agent id ``opencode-acp`` (the HTTP/SSE driver is ``opencode``). The provider and model come from
``OPENCODE_CONFIG_CONTENT`` (``corral.redirect``); ``opencode acp`` takes no model flag.

Over ACP the client is the approval surface, so edits, shell commands and fetches are set to
``ask`` through ``OPENCODE_PERMISSION`` (opencode merges it over every config file); a caller that
wants opencode's own configuration to decide passes ``OPENCODE_PERMISSION={}`` in ``env``.
"""

from __future__ import annotations

import json
from typing import ClassVar

from ..intents import Intent
from ..intents import opencode as intent_rules
from ._acp import AcpAdapter
from ._handoff_terminal import TerminalHandoff
from ._stores import store_hooks


@store_hooks("_store_opencode")
class OpenCodeAcpAdapter(TerminalHandoff, AcpAdapter):
    agent_id = "opencode-acp"
    display_name = "OpenCode (ACP)"
    cli_binary = "opencode"
    # Hand-off (seed 003; adapters/_handoff_terminal.py).
    handoff_kind = "persistent"
    handoff_processes = ("opencode",)
    handoff_session_flags = ("--session", "-s")
    handoff_resume_args = ("--session", "{sid}")
    acp_args = ("acp",)
    default_env: ClassVar[dict[str, str]] = {
        "OPENCODE_PERMISSION": json.dumps({"edit": "ask", "bash": "ask", "webfetch": "ask"})
    }

    cap_permissions = True
    cap_cancel = True
    cap_resume = True
    # cap_terminal stays False: corral serves ACP terminal/* (tested with a stand-in agent), but
    # no pinned CLI was seen calling it, so no real-CLI run shows it.
    cap_image_input = True

    provides_models = True
    provides_usage = True

    enforceable_intents = frozenset(Intent)
    intent_renderer = intent_rules.render
