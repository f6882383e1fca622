"""Claude Code → an Anthropic Messages endpoint.

Env only: ``ANTHROPIC_BASE_URL`` (the server root; the CLI appends ``/v1/messages``) and
``ANTHROPIC_API_KEY`` (sent as ``x-api-key``). ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``
stops the lookups of the vendor host and the title side request; ``DISABLE_TELEMETRY``,
``DISABLE_ERROR_REPORTING`` and ``DISABLE_AUTOUPDATER`` say the rest. The model goes into
``ANTHROPIC_MODEL`` and the small/fast slot, so side calls use the same name.

``IS_SANDBOX=1`` is set only with ``bypass_permissions``: as root, Claude Code refuses
``--permission-mode bypassPermissions`` / ``--dangerously-skip-permissions`` unless it is told it
runs in a sandbox. ``acceptEdits`` (enough for file writes) needs no such thing.
"""

from __future__ import annotations

from pathlib import Path

from ._model import Redirection, home_env, root_url


def redirect(
    *, base_url: str, model: str, api_key: str, home: Path, bypass_permissions: bool = False
) -> Redirection:
    config_dir = home / ".claude"
    env = {
        **home_env(home),
        "CLAUDE_CONFIG_DIR": str(config_dir),
        "ANTHROPIC_BASE_URL": root_url(base_url),
        "ANTHROPIC_API_KEY": api_key,
        "ANTHROPIC_MODEL": model,
        "ANTHROPIC_SMALL_FAST_MODEL": model,
        "ANTHROPIC_DEFAULT_HAIKU_MODEL": model,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    if bypass_permissions:
        env["IS_SANDBOX"] = "1"
    return Redirection(agent="claude", env=env, dirs=(home, config_dir))
