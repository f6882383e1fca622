"""aider → an OpenAI Chat Completions endpoint, through litellm's ``openai/`` provider.

Read from aider-chat 0.86.2 (``aider/models.py``, ``aider/args.py``): every option has an
``AIDER_*`` environment twin, and ``OPENAI_API_BASE`` / ``OPENAI_API_KEY`` point litellm's
``openai/<model>`` provider at any Chat Completions server. Unknown models make aider download
litellm's price list from the vendor's host on every start; a model entry in
``~/.aider.model.metadata.json`` answers that look-up locally (strace: one DNS look-up → none),
and ``LITELLM_LOCAL_MODEL_COST_MAP`` keeps litellm on its bundled copy. Update checks, release
notes and analytics are switched off; ``.gitignore`` is left alone.
"""

from __future__ import annotations

import json
from pathlib import Path

from ._model import Redirection, home_env, v1_url


def model_metadata(model: str) -> dict[str, object]:
    """The metadata entry that tells aider (and litellm) what ``openai/<model>`` is."""
    return {
        f"openai/{model}": {
            "max_input_tokens": 128_000,
            "max_tokens": 8_192,
            "max_output_tokens": 8_192,
            "input_cost_per_token": 0,
            "output_cost_per_token": 0,
            "litellm_provider": "openai",
            "mode": "chat",
        }
    }


def redirect(
    *, base_url: str, model: str, api_key: str, home: Path, bypass_permissions: bool = False
) -> Redirection:
    env = {
        **home_env(home),
        "OPENAI_API_BASE": v1_url(base_url),
        "OPENAI_API_KEY": api_key,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "AIDER_MODEL": f"openai/{model}",
        "AIDER_CHECK_UPDATE": "false",
        "AIDER_SHOW_RELEASE_NOTES": "false",
        "AIDER_ANALYTICS_DISABLE": "true",
        "AIDER_GITIGNORE": "false",
    }
    files = {home / ".aider.model.metadata.json": json.dumps(model_metadata(model), indent=2)}
    return Redirection(agent="aider", env=env, files=files, dirs=(home,))
