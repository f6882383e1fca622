"""Gemini CLI → a Gemini API endpoint.

``GOOGLE_GEMINI_BASE_URL`` is the server root only (the SDK appends
``/v1beta/models/<model>:streamGenerateContent``). ``GEMINI_API_KEY`` alone is not enough:
without ``security.auth.selectedType = "gemini-api-key"`` in settings the CLI exits 41
("Invalid auth method selected"). Usage statistics (Clearcut) and auto-update are switched off
in the same settings file. ``GEMINI_CLI_HOME`` is the directory that holds ``.gemini`` (the
core's ``homedir()``), so it is the isolated home itself. ``--model`` skips the router call
that the default ``auto`` model makes before every turn.
"""

from __future__ import annotations

import json
from pathlib import Path

from ._model import Redirection, home_env, root_url

SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
}


def redirect(
    *, base_url: str, model: str, api_key: str, home: Path, bypass_permissions: bool = False
) -> Redirection:
    env = {
        **home_env(home),
        "GEMINI_CLI_HOME": str(home),
        "GEMINI_API_KEY": api_key,
        "GOOGLE_GEMINI_BASE_URL": root_url(base_url),
    }
    files = {home / ".gemini" / "settings.json": json.dumps(SETTINGS, indent=2) + "\n"}
    return Redirection(agent="gemini", env=env, argv=("--model", model), files=files, dirs=(home,))
