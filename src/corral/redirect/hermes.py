"""Hermes Agent → an OpenAI Chat Completions endpoint, as the bare ``custom`` provider.

Read from hermes-agent 0.19.0 (``hermes_cli/runtime_provider.py``): with ``model.provider:
custom`` a *loopback* ``model.base_url`` is trusted and ``model.api_key`` is used for it;
``OPENAI_BASE_URL`` is no longer consulted (config.yaml is the only source of endpoint URLs) and
``OPENAI_API_KEY`` is only sent to OpenAI's own hosts. ``model.default`` names the model; no
``--model`` flag should be passed, because an explicit model makes ``-z`` auto-detect a catalogue
provider instead of the configured one. ``HERMES_HOME`` (``<home>/.hermes``) holds config.yaml and
``.env``; the remote model catalogue is switched off, and ``model.context_length`` is set so
that Hermes does not look the model up (on the endpoint, then on openrouter.ai).
"""

from __future__ import annotations

from pathlib import Path

from ._model import Redirection, home_env, v1_url

CONTEXT_LENGTH = 128_000


def config(*, base_url: str, model: str, api_key: str) -> dict[str, object]:
    return {
        "model": {
            "provider": "custom",
            "base_url": v1_url(base_url),
            "default": model,
            "api_key": api_key,
            # A known context length skips the probes of the endpoint (/api/v1/models, /api/show,
            # /v1/models…) and the OpenRouter catalogue download that unknown models trigger.
            "context_length": CONTEXT_LENGTH,
        },
        "model_catalog": {"enabled": False},
    }


def redirect(
    *, base_url: str, model: str, api_key: str, home: Path, bypass_permissions: bool = False
) -> Redirection:
    hermes_home = home / ".hermes"
    import yaml  # only when a hermes launch writes its config

    text = yaml.safe_dump(config(base_url=base_url, model=model, api_key=api_key), sort_keys=False)
    files = {
        hermes_home / "config.yaml": text,
        # Hermes loads secrets from here; the key is also in config.yaml (used for loopback URLs).
        hermes_home / ".env": f"CUSTOM_API_KEY={api_key}\n",
    }
    env = {**home_env(home), "HERMES_HOME": str(hermes_home)}
    return Redirection(agent="hermes", env=env, files=files, dirs=(home,))
