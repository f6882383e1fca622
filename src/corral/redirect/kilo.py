"""Kilo (an OpenCode fork) → an OpenAI Chat Completions endpoint.

Same config shape as OpenCode under the ``KILO_`` env prefix (``KILO_CONFIG_CONTENT``,
``KILO_DISABLE_*``; names read from the 7.7.7 binary) plus ``KILO_TELEMETRY_LEVEL=off``, which
stops the PostHog lookups. Left over: lookups of the vendor's own API host (notifications and
the like), which fail fast offline and do not affect a run.
"""

from __future__ import annotations

from pathlib import Path

from ._model import Redirection
from ._opencode_family import redirect_family


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
        extra_env={"KILO_TELEMETRY_LEVEL": "off"},
    )
