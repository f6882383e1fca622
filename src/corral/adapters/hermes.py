"""Hermes Agent over ACP: ``hermes acp``.

Hermes is installed from PyPI (``hermes-agent[acp]``) into its own virtualenv; the endpoint is
``~/.hermes/config.yaml`` (``HERMES_HOME``) written by ``corral.redirect``. No model flag: the
model is ``model.default`` in that file.
"""

from __future__ import annotations

from ..intents import Intent, refusals
from ..intents import unguarded as intent_rules
from ._acp import AcpAdapter


class HermesAdapter(AcpAdapter):
    agent_id = "hermes"
    display_name = "Hermes Agent"
    cli_binary = "hermes"
    acp_args = ("acp",)

    cap_image_input = True
    cap_cancel = True
    cap_resume = True
    # cap_terminal stays False: corral serves ACP terminal/* (tested with a stand-in agent), but
    # no pinned CLI was seen calling it, so no real-CLI run shows it.

    provides_models = False
    provides_usage = True

    enforceable_intents = frozenset({Intent.FULL})
    intent_renderer = intent_rules.render
    intent_refusals = refusals(f"Hermes {intent_rules.REASON}")
