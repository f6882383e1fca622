"""A prompt's launch policy (seed 001: it travels with a queued prompt, and edits keep it).

Keys: ``model``, ``effort``, ``intent``. Checked when the prompt is queued (anything that cannot
be honoured is refused then, naming the key) and applied when it is delivered:

* ``model`` — switched with the adapter's ``set_model`` before the prompt is sent, when it differs;
* ``effort`` and ``intent`` — fixed at launch: a prompt may repeat the session's value; a different
  one is refused (an intent is never loosened or changed mid-session: start a new session).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ConfigError, UnsupportedOperation
from ..intents import parse_intent
from ._models import SessionRecord

KEYS = ("model", "effort", "intent")


def check(record: SessionRecord, launch: Mapping[str, Any], *, can_set_model: bool) -> None:
    """Refuse a launch policy the session cannot honour (``ConfigError`` / ``UnsupportedOperation``)."""
    unknown = sorted(set(launch) - set(KEYS))
    if unknown:
        raise ConfigError(f"unknown launch policy key(s): {', '.join(unknown)} (known: {KEYS})")
    if "intent" in launch:
        try:
            wanted = parse_intent(launch["intent"])
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        if wanted != record.intent:
            raise ConfigError(
                f"a prompt cannot change the session's intent ({record.intent} → {wanted}); "
                "intents are fixed at launch: start a new session"
            )
    if "effort" in launch and (launch["effort"] or None) != record.effort:
        raise ConfigError("a prompt cannot change the session's effort; it is fixed at launch")
    model = launch.get("model")
    if model is not None and not isinstance(model, str):
        raise ConfigError("launch policy 'model' must be a string")
    if model and model != record.model and not can_set_model:
        raise UnsupportedOperation(record.adapter_id, "a per-prompt model (set_model)")


def model_to_apply(launch: Mapping[str, Any]) -> str | None:
    model = launch.get("model")
    return model if isinstance(model, str) and model else None
