"""What an adapter reports about one model: its id and, where the agent lists them, its efforts.

``list_models()`` keeps answering names (its callers are unchanged); ``describe_models()``
answers :class:`ModelInfo` values. Efforts are what the agent itself reports per model (Claude
Code's ``initialize`` ``supportedEffortLevels``, Codex ``model/list``
``supportedReasoningEfforts``, OpenCode's model ``variants``); ``efforts is None`` means the
adapter could not list them, and its class says why (``efforts_unavailable``). No fixed list.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

MAX_EFFORTS = 32


class ModelInfo(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    """The value to launch with (``--model`` / ``model`` option)."""
    name: str | None = None
    """The agent's display name, when it gives one."""
    efforts: tuple[str, ...] | None = None
    """The reasoning efforts the agent lists for this model, in its order; ``()``: the model
    takes none; ``None``: not listed (see the adapter's ``efforts_unavailable``)."""
    default_effort: str | None = None
    """The effort the agent uses when none is given, when it says so."""


def effort_names(values: Any, key: str | None = None) -> tuple[str, ...] | None:
    """The effort names of an agent's list (strings, or dicts holding ``key``); malformed
    entries are skipped; not a list: ``None``. Bounded, duplicates dropped, order kept."""
    if not isinstance(values, list):
        return None
    out: list[str] = []
    for value in values:
        name = value if key is None else value.get(key) if isinstance(value, dict) else None
        if isinstance(name, str) and name and len(name) <= 32 and name not in out:
            out.append(name)
        if len(out) >= MAX_EFFORTS:
            break
    return tuple(out)


def names_of(models: Iterable[ModelInfo]) -> list[str]:
    return [m.id for m in models]
