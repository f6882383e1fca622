"""TEMPORARY stand-in for ``corral.redirect`` / ``corral.agents.locate`` until they land on main.

Delete this module and use the real ones as soon as they are merged.
"""

from __future__ import annotations

import json
from pathlib import Path


def redirect_env(
    cli: str, base_url: str, model: str, api_key: str, home: Path
) -> tuple[dict[str, str], tuple[str, ...]]:
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
    }
    if cli == "claude":
        env |= {
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": api_key,
            "ANTHROPIC_MODEL": model,
            "ANTHROPIC_SMALL_FAST_MODEL": model,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
        }
        return env, ()
    if cli == "qwen":
        settings = home / ".qwen" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(
            json.dumps(
                {
                    "privacy": {"usageStatisticsEnabled": False},
                    "general": {"enableAutoUpdate": False, "disableAutoUpdate": True},
                }
            )
        )
        env |= {
            "OPENAI_BASE_URL": base_url + "/v1",
            "OPENAI_API_KEY": api_key,
            "OPENAI_MODEL": model,
        }
        return env, ("--auth-type", "openai")
    raise ValueError(cli)


PINNED = {"claude": "2.1.197", "qwen": "0.15.10"}


def locate(cli: str) -> Path | None:
    path = Path(f"/root/.cache/corral/agents/{cli}/{PINNED.get(cli, '?')}/node_modules/.bin/{cli}")
    return path if path.exists() else None
