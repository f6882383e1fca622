"""Codex → an OpenAI Responses endpoint, through a custom model provider.

Only ``-c`` overrides and ``--disable`` flags; nothing is written but an empty ``CODEX_HOME``.
A custom provider (``wire_api="responses"``, the only value 0.171 accepts) with an ``env_key``
avoids the built-in provider's WebSocket attempts; ``OPENAI_BASE_URL`` is ignored by this
version. Use an *unknown* model name (``fake-model``): a known one switches Codex to its
"responses-lite" body whose only tool is a JavaScript code-mode ``exec``. The four ``--disable``
flags plus ``analytics.enabled=false`` stop the plugin, app and analytics lookups.
"""

from __future__ import annotations

import json
from pathlib import Path

from ._model import Redirection, home_env, v1_url

PROVIDER_ID = "corral"
API_KEY_ENV = "CORRAL_MODEL_API_KEY"
DISABLED_FEATURES = ("plugins", "remote_plugin", "apps", "plugin_sharing")


def redirect(
    *, base_url: str, model: str, api_key: str, home: Path, bypass_permissions: bool = False
) -> Redirection:
    codex_home = home / ".codex"
    provider = (
        f"{{name={json.dumps(PROVIDER_ID)},base_url={json.dumps(v1_url(base_url))},"
        f'env_key={json.dumps(API_KEY_ENV)},wire_api="responses"}}'
    )
    argv: list[str] = []
    for feature in DISABLED_FEATURES:
        argv += ["--disable", feature]
    for setting in (
        "check_for_update_on_startup=false",
        "analytics.enabled=false",
        f"model_provider={json.dumps(PROVIDER_ID)}",
        f"model={json.dumps(model)}",
        f"model_providers.{PROVIDER_ID}={provider}",
    ):
        argv += ["-c", setting]
    env = {**home_env(home), "CODEX_HOME": str(codex_home), API_KEY_ENV: api_key}
    return Redirection(agent="codex", env=env, argv=tuple(argv), dirs=(home, codex_home))
