"""Kilo (an OpenCode fork) → an OpenAI Chat Completions endpoint.

Same config shape as OpenCode under the ``KILO_`` env prefix (``KILO_CONFIG_CONTENT``,
``KILO_DISABLE_*``; names read from the 7.7.7 binary) plus ``KILO_TELEMETRY_LEVEL=off``, which
stops the PostHog lookups. Kilo also looks up its vendor's API host at start-up (notifications,
profile); no setting turns that off, but ``KILO_API_URL`` / ``KILO_API_BASE`` move it: they point
at :data:`DEAD_URL` on loopback, where nothing listens, so no name is looked up and the request
is refused at once. Under strace (7.7.7, ``kilo run``): no DNS lookup left, only the model server.
"""

from __future__ import annotations

from pathlib import Path

from ._model import Redirection
from ._opencode_family import redirect_family

DEAD_URL = "http://127.0.0.1:9"
"""The discard port on loopback: nothing listens there, so a connection is refused at once."""


def redirect(
    *, base_url: str, model: str, api_key: str, home: Path, bypass_permissions: bool = False
) -> Redirection:
    return redirect_family(
        "kilo",
        "KILO",
        base_url=base_url,
        model=model,
        api_key=api_key,
        home=home,
        # Any value but "all" switches PostHog telemetry off (read once at start).
        extra_env={
            "KILO_TELEMETRY_LEVEL": "off",
            "KILO_API_URL": DEAD_URL,
            "KILO_API_BASE": DEAD_URL,
        },
    )
