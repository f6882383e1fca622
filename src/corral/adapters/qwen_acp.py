"""Qwen Code over ACP: ``qwen --acp --auth-type openai``.

Kept apart from the stream-json ``QwenAdapter`` (agent id ``qwen``): this one is ``qwen-acp``.
The OpenAI-compatible endpoint (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``OPENAI_MODEL``) and
``--auth-type openai`` come from ``corral.redirect``; without ``--auth-type`` the ACP agent asks
for an interactive login.
"""

from __future__ import annotations

from ..intents import Intent
from ..intents import acp as intent_rules
from ._acp import AcpAdapter
from ._handoff_terminal import TerminalHandoff
from ._stores import store_hooks


@store_hooks("_store_qwen")
class QwenAcpAdapter(TerminalHandoff, AcpAdapter):
    agent_id = "qwen-acp"
    display_name = "Qwen Code (ACP)"
    cli_binary = "qwen"
    # Hand-off (seed 003; adapters/_handoff_terminal.py).
    handoff_kind = "persistent"
    handoff_processes = ("qwen",)
    handoff_session_flags = ("--resume", "-r", "--session-id")
    handoff_resume_args = ("--resume", "{sid}")
    acp_args = ("--acp",)
    model_flags = ("--model", "-m")
    auth_methods = ("openai",)

    cap_permissions = True
    cap_cancel = True
    cap_resume = True
    # cap_terminal stays False: corral serves ACP terminal/* (tested with a stand-in agent), but
    # no pinned CLI was seen calling it, so no real-CLI run shows it.
    cap_image_input = True

    provides_models = True
    provides_usage = True

    enforceable_intents = frozenset(Intent)
    intent_renderer = intent_rules.render_qwen_acp
