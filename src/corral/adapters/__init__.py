"""Adapters: one module per vendor, all on the contract in :mod:`corral.adapters.base`.

``BUILTIN_ADAPTERS`` is the one table of corral's own adapter classes by id. Everything that turns an
id into a class — the registry, the session manager, ``corral run`` — reads it through
:func:`builtin_adapter_class`, which imports lazily so a missing optional dependency of one driver
never breaks the others.
"""

from __future__ import annotations

import importlib

from .base import BaseAdapter

BUILTIN_ADAPTERS: dict[str, str] = {
    "claude-code": "corral.adapters.claude:ClaudeAdapter",
    "qwen": "corral.adapters.qwen:QwenAdapter",
    "codex": "corral.adapters.codex:CodexAdapter",
    "codex-exec": "corral.adapters.codex:CodexExecAdapter",
    "gemini": "corral.adapters.gemini:GeminiAdapter",
    "qwen-acp": "corral.adapters.qwen_acp:QwenAcpAdapter",
    "opencode-acp": "corral.adapters.opencode_acp:OpenCodeAcpAdapter",
    "hermes": "corral.adapters.hermes:HermesAdapter",
    "opencode": "corral.adapters.opencode:OpenCodeAdapter",
    "pi": "corral.adapters.pi:PiAdapter",
}
"""Adapter id → ``module:Class`` of every adapter corral ships."""

ALIASES: dict[str, str] = {"claude": "claude-code"}
"""Short names accepted wherever an adapter id is."""


def canonical_id(adapter_id: str) -> str:
    return ALIASES.get(adapter_id, adapter_id)


def builtin_adapter_class(adapter_id: str) -> type[BaseAdapter] | None:
    """The built-in class for ``adapter_id`` (aliases accepted), or ``None`` if corral has none."""
    ref = BUILTIN_ADAPTERS.get(canonical_id(adapter_id))
    if ref is None:
        return None
    module, _, name = ref.partition(":")
    cls = getattr(importlib.import_module(module), name)
    if not (isinstance(cls, type) and issubclass(cls, BaseAdapter)):
        raise TypeError(f"{ref} is not a BaseAdapter subclass")
    return cls


__all__ = ["ALIASES", "BUILTIN_ADAPTERS", "builtin_adapter_class", "canonical_id"]
