"""OpenCode → an OpenAI Chat Completions endpoint (``@ai-sdk/openai-compatible``, bundled).

Env only: ``OPENCODE_CONFIG_CONTENT`` carries the provider, the model, ``permission`` allow-all
and ``autoupdate``/``share`` off; ``OPENCODE_DISABLE_*`` stop the models catalogue, default
plugins, auto-update, LSP downloads and sharing. State goes to the XDG dirs under the isolated
home. Left over: at start-up 1.18.33 still asks the npm registry for ``@opencode-ai/plugin``;
that fails silently offline and cannot be switched off.
"""

from __future__ import annotations

from pathlib import Path

from ._model import Redirection
from ._opencode_family import redirect_family


def redirect(
    *, base_url: str, model: str, api_key: str, home: Path, bypass_permissions: bool = False
) -> Redirection:
    return redirect_family(
        "opencode", "OPENCODE", base_url=base_url, model=model, api_key=api_key, home=home
    )
