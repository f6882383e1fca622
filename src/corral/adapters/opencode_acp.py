"""OpenCode over ACP: ``opencode acp``.

Agent id ``opencode-acp`` (the HTTP/SSE driver is ``opencode``). The provider and model come from
``OPENCODE_CONFIG_CONTENT`` (``corral.redirect``); ``opencode acp`` takes no model flag.
"""

from __future__ import annotations

from ._acp import AcpAdapter


class OpenCodeAcpAdapter(AcpAdapter):
    agent_id = "opencode-acp"
    display_name = "OpenCode (ACP)"
    cli_binary = "opencode"
    acp_args = ("acp",)

    cap_images = True
    cap_image_input = True
    cap_permissions = True
    cap_interrupt = True
    cap_cancel = True
    cap_resume = True
    cap_terminal = True

    provides_models = False
    provides_usage = False
