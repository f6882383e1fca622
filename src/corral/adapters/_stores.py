"""The vendor session stores, by adapter: one reader module per vendor, and the hooks they serve.

Each ``_store_<vendor>`` module offers the same functions: ``store_roots(env)``, ``files(env,
since)`` (stat only), ``header(stat)`` (headers only), ``scan(env, since)``,
``latest_sid_for_cwd(cwd, env)``, ``transcript_path(cwd, sid, env)``, ``mirror(cwd, sid, env)``
and a ``Parser`` whose ``feed(record)`` turns one record into corral events. Several adapters
drive one CLI (Qwen's stream-json and ACP drivers, OpenCode's server and ACP, Codex's app-server
and exec): they share the store, and :func:`store_hooks` wires the same reader into each.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from ._handoff import ExternalSession, HandoffHooks, TranscriptMirror

#: Adapter id → store module (under ``corral.adapters``).
STORE_MODULES: dict[str, str] = {
    "claude-code": "_store_claude",
    "codex": "_store_codex",
    "codex-exec": "_store_codex",
}

#: Store module → the adapter id its sessions are listed under.
PRIMARY: dict[str, str] = {}
for _agent, _module in STORE_MODULES.items():
    PRIMARY.setdefault(_module, _agent)


def store_module(name: str) -> ModuleType:
    return importlib.import_module(f"{__package__}.{name}")


def store_for(agent: str) -> ModuleType | None:
    name = STORE_MODULES.get(agent)
    return store_module(name) if name else None


def store_roots(agent: str, env: Mapping[str, str] | None = None) -> list[Path]:
    """The directories ``agent``'s CLI keeps its sessions in, under ``env``."""
    module = store_for(agent)
    return list(module.store_roots(env)) if module else []


def primary_stores() -> list[tuple[str, ModuleType]]:
    """(adapter id, module) once per store."""
    return [(agent, store_module(name)) for name, agent in PRIMARY.items()]


_A = TypeVar("_A", bound=type[HandoffHooks])


def store_hooks(name: str) -> Callable[[_A], _A]:
    """Class decorator: answer ``scan_external_sessions``, ``latest_sid_for_cwd`` and
    ``make_transcript_mirror`` from the store module ``name``."""

    def scan(
        cls: type, *, env: Mapping[str, str] | None = None, since: float | None = None
    ) -> Iterator[ExternalSession]:
        module = store_module(name)
        agent = str(getattr(cls, "agent_id", module.AGENT))
        for entry in module.scan(env, since):
            yield entry if entry.agent_id == agent else _as(entry, agent)

    def latest(cls: type, cwd: str, *, env: Mapping[str, str] | None = None) -> str | None:
        result: str | None = store_module(name).latest_sid_for_cwd(cwd, env)
        return result

    def mirror(
        cls: type, cwd: str, sid: str, *, env: Mapping[str, str] | None = None
    ) -> TranscriptMirror:
        result: TranscriptMirror = store_module(name).mirror(cwd, sid, env)
        return result

    def decorate(cls: _A) -> _A:
        hooks: dict[str, Any] = {
            "scan_external_sessions": classmethod(scan),
            "latest_sid_for_cwd": classmethod(latest),
            "make_transcript_mirror": classmethod(mirror),
        }
        for attr, hook in hooks.items():
            setattr(cls, attr, hook)
        return cls

    return decorate


def _as(entry: ExternalSession, agent: str) -> ExternalSession:
    import msgspec

    return msgspec.structs.replace(entry, agent_id=agent)
