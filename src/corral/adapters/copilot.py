"""GitHub Copilot CLI over ACP: ``copilot --acp`` (agent id ``copilot``).

The model endpoint comes from ``corral.redirect.copilot`` (bring-your-own-model variables and
``COPILOT_OFFLINE=true``): with them 1.0.102 needs no GitHub account and reaches no other host.
The model is ``COPILOT_MODEL``; corral passes no model flag over ACP.
"""

from __future__ import annotations

from types import MappingProxyType

from ..intents import Intent
from ._acp import AcpAdapter


class CopilotAdapter(AcpAdapter):
    agent_id = "copilot"
    display_name = "GitHub Copilot CLI"
    cli_binary = "copilot"
    acp_args = ("--acp",)

    # Each flag below is shown by a passing run of `corral conformance copilot` on 1.0.102.
    cap_permissions = True
    cap_cancel = True
    cap_resume = True
    cap_image_input = True

    # No intent is offered until the intents suite shows the pinned Copilot CLI enforcing it.
    intent_refusals = MappingProxyType(
        {
            i.value: "no run of the pinned Copilot CLI 1.0.102 has shown this intent enforced yet"
            for i in Intent
        }
    )

    # Its ACP session lists no models (an empty list from 1.0.102 against the scripted model).
    provides_models = False
    models_unavailable = "GitHub Copilot CLI 1.0.102 lists no models over ACP"
    provides_usage = True
