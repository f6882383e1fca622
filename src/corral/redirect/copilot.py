"""GitHub Copilot CLI → an OpenAI Chat Completions endpoint (its bring-your-own-model mode).

``COPILOT_PROVIDER_BASE_URL`` (with ``/v1``), ``COPILOT_PROVIDER_TYPE=openai``,
``COPILOT_PROVIDER_WIRE_API=completions``, ``COPILOT_PROVIDER_API_KEY`` and ``COPILOT_MODEL``
replace GitHub's model routing, so no GitHub login is needed; ``COPILOT_OFFLINE=true`` makes
1.0.102 skip every other network access (authentication, telemetry, web tools, the GitHub MCP
server, auto-update) — names and meanings from ``copilot help environment``.
"""

from __future__ import annotations

from pathlib import Path

from ._model import Redirection, home_env, v1_url


def redirect(
    *, base_url: str, model: str, api_key: str, home: Path, bypass_permissions: bool = False
) -> Redirection:
    env = {
        **home_env(home),
        "COPILOT_OFFLINE": "true",
        "COPILOT_PROVIDER_BASE_URL": v1_url(base_url),
        "COPILOT_PROVIDER_TYPE": "openai",
        "COPILOT_PROVIDER_WIRE_API": "completions",
        "COPILOT_PROVIDER_API_KEY": api_key,
        "COPILOT_MODEL": model,
    }
    return Redirection(agent="copilot", env=env, dirs=(home,))
