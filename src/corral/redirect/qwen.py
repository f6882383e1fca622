"""Qwen Code → an OpenAI Chat Completions endpoint.

``OPENAI_BASE_URL`` (with ``/v1``), ``OPENAI_API_KEY``, ``OPENAI_MODEL`` and ``--auth-type
openai``; ``~/.qwen/settings.json`` switches off usage statistics (Aliyun RUM) and auto-update,
and declares the redirected model image-capable: Qwen Code guesses a model's input modalities from
its name and drops images (``[Unsupported image file …]``) for names it does not know.
"""

from __future__ import annotations

import json
from pathlib import Path

from ._model import Redirection, home_env, v1_url

SETTINGS = {
    "privacy": {"usageStatisticsEnabled": False},
    "general": {"enableAutoUpdate": False, "disableAutoUpdate": True},
    "model": {"generationConfig": {"modalities": {"image": True}}},
}


def redirect(
    *, base_url: str, model: str, api_key: str, home: Path, bypass_permissions: bool = False
) -> Redirection:
    env = {
        **home_env(home),
        "OPENAI_BASE_URL": v1_url(base_url),
        "OPENAI_API_KEY": api_key,
        "OPENAI_MODEL": model,
    }
    files = {home / ".qwen" / "settings.json": json.dumps(SETTINGS, indent=2) + "\n"}
    return Redirection(
        agent="qwen", env=env, argv=("--auth-type", "openai"), files=files, dirs=(home,)
    )
