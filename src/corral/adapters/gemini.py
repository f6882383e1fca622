"""Gemini CLI over ACP: ``gemini --acp --skip-trust``.

``--skip-trust`` keeps the CLI from asking whether the folder is trusted (an untrusted folder
would run in a restricted mode). Offline configuration (API key, base URL, the settings file with
``security.auth.selectedType``) comes from ``corral.redirect`` through ``env``; the model is a
command-line flag (``--model``), which also skips the router call the default ``auto`` model
makes before every turn.
"""

from __future__ import annotations

from ..intents import Intent, refusals
from ..intents import acp as intent_rules
from ._acp import AcpAdapter
from ._acp_argv import GEMINI
from ._handoff_terminal import TerminalHandoff
from ._stores import store_hooks


@store_hooks("_store_gemini")
class GeminiAdapter(TerminalHandoff, AcpAdapter):
    agent_id = "gemini"
    display_name = "Gemini CLI"
    cli_binary = GEMINI.cli_binary
    # Hand-off (seed 003; adapters/_handoff_terminal.py).
    handoff_kind = "persistent"
    handoff_processes = ("gemini",)
    handoff_session_flags = ("--session-id",)
    handoff_resume_args = ("--resume", "{sid}")
    acp_args = GEMINI.acp_args
    model_flags = GEMINI.model_flags
    auth_methods = ("gemini-api-key",)
    serve_fs_read = False
    """0.61.0 cannot create a file when reads go through ``fs/read_text_file``: it stringifies our
    not-found error object ("[object Object]") and never sees ENOENT (docs/protocols/acp.md).
    Reads stay local; writes still go through corral, confined to the project root."""

    cap_image_input = True
    cap_permissions = True
    cap_cancel = True
    # cap_terminal stays False: corral serves ACP terminal/* (tested with a stand-in agent), but
    # no pinned CLI was seen calling it, so no real-CLI run shows it.

    provides_models = True
    provides_usage = True

    enforceable_intents = frozenset({Intent.ASK, Intent.REVIEW, Intent.FULL})
    intent_renderer = intent_rules.render_gemini
    intent_refusals = refusals(
        "Gemini CLI's ACP permission requests for shell commands carry no command, only a display"
        " title, so corral cannot grant the allowed commands (git commit, the project's commands)"
        " without trusting a title; refused rather than guessed",
        Intent.WORK,
        Intent.ACT_PR,
    )
