"""Hermes Agent over ACP: ``hermes acp``.

Hermes is installed from PyPI (``hermes-agent[acp]``) into its own virtualenv; the endpoint is
``~/.hermes/config.yaml`` (``HERMES_HOME``) written by ``corral.redirect``. No model flag: the
model is ``model.default`` in that file.
"""

from __future__ import annotations

from ..intents import Intent, refusals
from ..intents import unguarded as intent_rules
from ._acp import AcpAdapter
from ._acp_argv import HERMES
from ._handoff_terminal import TerminalHandoff
from ._stores import store_hooks


@store_hooks("_store_hermes")
class HermesAdapter(TerminalHandoff, AcpAdapter):
    agent_id = "hermes"
    display_name = "Hermes Agent"
    cli_binary = HERMES.cli_binary
    # Hand-off (seed 003; adapters/_handoff_terminal.py).
    handoff_kind = "persistent"
    handoff_processes = ("hermes",)
    # No session flag: `--resume` takes a title too, so any hermes in the directory holds it.
    handoff_session_flags = ()
    handoff_resume_args = ("--resume", "{sid}")
    acp_args = HERMES.acp_args
    restart_after_cancel = True
    """Hermes 0.19.0 answers a prompt cancelled during a tool with "Internal error" and leaves
    its session marked running, so every later prompt is only queued, never run (it never reaches
    the model): corral restarts it and resumes the session (``session/load``)."""

    cap_image_input = True
    cap_permissions = True
    """Hermes asks over ACP before it edits a file and before a command its danger patterns flag
    (harmless commands run unasked); the conformance approvals use an edit on this target."""
    cap_cancel = True
    cap_resume = True
    # cap_terminal stays False: corral serves ACP terminal/* (tested with a stand-in agent), but
    # no pinned CLI was seen calling it, so no real-CLI run shows it.

    provides_models = True
    provides_usage = True

    enforceable_intents = frozenset({Intent.FULL})
    intent_renderer = intent_rules.render
    intent_refusals = refusals(f"Hermes {intent_rules.REASON}")
