"""Pi → an OpenAI Chat Completions endpoint, as a custom provider in ``models.json``.

``PI_CODING_AGENT_DIR`` points at ``<home>/.pi/agent`` (where ``models.json`` is written);
``--provider/--model`` select it and ``--offline`` (plus ``PI_OFFLINE=1``) turns off the
start-up update check and install telemetry.
"""

from __future__ import annotations

import json
from pathlib import Path

from ._model import Redirection, home_env, v1_url

PROVIDER_ID = "corral"


def models_json(*, base_url: str, model: str, api_key: str) -> dict[str, object]:
    return {
        "providers": {
            PROVIDER_ID: {
                "baseUrl": v1_url(base_url),
                "api": "openai-completions",
                "apiKey": api_key,
                "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                "models": [
                    {
                        "id": model,
                        "name": model,
                        "reasoning": False,
                        "input": ["text", "image"],
                        "contextWindow": 128000,
                        "maxTokens": 8000,
                    }
                ],
            }
        }
    }


def redirect(
    *, base_url: str, model: str, api_key: str, home: Path, bypass_permissions: bool = False
) -> Redirection:
    agent_dir = home / ".pi" / "agent"
    env = {**home_env(home), "PI_CODING_AGENT_DIR": str(agent_dir), "PI_OFFLINE": "1"}
    text = json.dumps(models_json(base_url=base_url, model=model, api_key=api_key), indent=2)
    return Redirection(
        agent="pi",
        env=env,
        argv=("--provider", PROVIDER_ID, "--model", model, "--offline"),
        files={agent_dir / "models.json": text + "\n"},
        dirs=(home,),
    )
