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
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import msgspec

from ._handoff import ExternalSession, HandoffHooks, TranscriptMirror
from ._store_common import FileStat

#: Adapter id → store module (under ``corral.adapters``).
STORE_MODULES: dict[str, str] = {
    "claude-code": "_store_claude",
    "codex": "_store_codex",
    "codex-exec": "_store_codex",
    "gemini": "_store_gemini",
    "qwen": "_store_qwen",
    "qwen-acp": "_store_qwen",
    "pi": "_store_pi",
    "opencode": "_store_opencode",
    "opencode-acp": "_store_opencode",
    "opencode-run": "_store_opencode",
    "hermes": "_store_hermes",
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


def store_files(agent: str, env: Mapping[str, str] | None = None) -> list[Path]:
    """Every file of ``agent``'s store under ``env`` (what ``corral record AGENT store`` keeps):
    the module's ``record_files`` when it has one, else all files under its roots."""
    module = store_for(agent)
    if module is None:
        return []
    if hasattr(module, "record_files"):
        return [p for p in module.record_files(env) if p.is_file()]
    return sorted(p for root in module.store_roots(env) if root.is_dir() for p in root.rglob("*"))


def headers(module: ModuleType, stat: FileStat) -> list[ExternalSession]:
    """The sessions one store file holds: a database many, a transcript one (or none)."""
    if hasattr(module, "headers"):
        return list(module.headers(stat))
    entry = module.header(stat)
    return [entry] if entry is not None else []


def primary_stores() -> list[tuple[str, ModuleType]]:
    """(adapter id, module) once per store."""
    return [(agent, store_module(name)) for name, agent in PRIMARY.items()]


def merge(entries: Iterable[ExternalSession]) -> list[ExternalSession]:
    """One entry per (agent, session id), newest first.

    A session may span files (Gemini CLI starts a stub log on every resume and keeps writing
    the old one): the entry kept is the one with a title, else the biggest file, with the
    newest mtime of them all.
    """
    groups: dict[tuple[str, str], list[ExternalSession]] = {}
    for entry in entries:
        groups.setdefault((entry.agent_id, entry.sid), []).append(entry)
    merged = []
    for group in groups.values():
        best = max(group, key=lambda e: (e.title is not None, e.size, e.mtime))
        newest = max(e.mtime for e in group)
        merged.append(best if best.mtime == newest else msgspec.structs.replace(best, mtime=newest))
    return sorted(merged, key=lambda e: e.mtime, reverse=True)


def scan(
    module: ModuleType, env: Mapping[str, str] | None = None, since: float | None = None
) -> list[ExternalSession]:
    """The sessions of one store, merged (see :func:`merge`)."""
    return merge(module.scan(env, since))


_A = TypeVar("_A", bound=type[HandoffHooks])


def store_hooks(name: str) -> Callable[[_A], _A]:
    """Class decorator: answer ``scan_external_sessions``, ``latest_sid_for_cwd`` and
    ``make_transcript_mirror`` from the store module ``name``."""

    def scan_hook(
        cls: type, *, env: Mapping[str, str] | None = None, since: float | None = None
    ) -> Iterator[ExternalSession]:
        module = store_module(name)
        agent = str(getattr(cls, "agent_id", module.AGENT))
        for entry in scan(module, env, since):
            yield (
                entry if entry.agent_id == agent else msgspec.structs.replace(entry, agent_id=agent)
            )

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
            "scan_external_sessions": classmethod(scan_hook),
            "latest_sid_for_cwd": classmethod(latest),
            "make_transcript_mirror": classmethod(mirror),
        }
        for attr, hook in hooks.items():
            setattr(cls, attr, hook)
        return cls

    return decorate
