"""OpenCode and its forks (Kilo): one inline config in an env var plus ``<PREFIX>_DISABLE_*``."""

from __future__ import annotations

import json
from pathlib import Path

from ._model import Redirection, home_env, v1_url

PROVIDER_ID = "corral"
_DISABLE = (
    "MODELS_FETCH",  # the models catalogue host
    "DEFAULT_PLUGINS",
    "AUTOUPDATE",
    "LSP_DOWNLOAD",
    "SHARE",
    "CLAUDE_CODE",  # do not read ~/.claude prompts and skills
)


def config(*, base_url: str, model: str, api_key: str) -> dict[str, object]:
    """The inline config: one OpenAI-compatible provider, every permission allowed."""
    return {
        "provider": {
            PROVIDER_ID: {
                "npm": "@ai-sdk/openai-compatible",
                "name": "corral",
                "options": {"baseURL": v1_url(base_url), "apiKey": api_key},
                "models": {
                    model: {
                        "name": model,
                        "tool_call": True,
                        # Without these, OpenCode replaces image parts with an error text.
                        "attachment": True,
                        "modalities": {"input": ["text", "image"], "output": ["text"]},
                    }
                },
            }
        },
        "model": f"{PROVIDER_ID}/{model}",
        "small_model": f"{PROVIDER_ID}/{model}",
        "permission": {"edit": "allow", "bash": "allow", "webfetch": "allow"},
        "autoupdate": False,
        "share": "disabled",
    }


def redirect_family(
    agent: str,
    env_prefix: str,
    *,
    base_url: str,
    model: str,
    api_key: str,
    home: Path,
    extra_env: dict[str, str] | None = None,
) -> Redirection:
    env = home_env(home)
    env[f"{env_prefix}_CONFIG_CONTENT"] = json.dumps(
        config(base_url=base_url, model=model, api_key=api_key), separators=(",", ":")
    )
    for what in _DISABLE:
        env[f"{env_prefix}_DISABLE_{what}"] = "1"
    env.update(extra_env or {})
    return Redirection(agent=agent, env=env, dirs=(home,))
