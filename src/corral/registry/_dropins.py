"""Drop-in Python adapters (seed 003): modules in a directory and entry points, loaded defensively.

Each module is imported on its own. Importing it runs the BaseAdapter contract check, so a module
whose adapter class breaks the contract raises ``TypeError`` while importing: that module, like one
with a syntax or import error, is logged and skipped, and the others still load. Every
non-abstract BaseAdapter subclass *defined* in a module (not merely imported into it) becomes a
candidate; the registry then rejects ids that collide with built-ins.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import inspect
import logging
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, get_args

import msgspec

from ..adapters.base import BaseAdapter
from ..manifests import Manifest, Platform, parse_manifest

log = logging.getLogger("corral.registry")

ADAPTERS_GROUP = "corral.adapters"
"""Entry-point group of third-party adapters: a module or a BaseAdapter subclass per entry."""
DRIVERS_GROUP = "corral.drivers"
"""Entry-point group of protocol drivers: entry name = protocol name, value = BaseAdapter subclass."""


class EntryPointLike(Protocol):
    name: str
    value: str

    def load(self) -> Any: ...


EntryPointSource = Callable[[str], Iterable[EntryPointLike]]


def installed_entry_points(group: str) -> Iterable[EntryPointLike]:
    return importlib.metadata.entry_points(group=group)


class LoadProblem(msgspec.Struct, frozen=True, kw_only=True):
    """Something that was skipped while loading the registry, and why."""

    origin: str
    message: str


class Candidate(msgspec.Struct, frozen=True, kw_only=True):
    adapter_class: type[BaseAdapter]
    origin: str


def _module_name(path: Path) -> str:
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:10]
    return f"corral_ext_adapters.{path.stem}_{digest}"


def import_module_file(path: Path) -> ModuleType:
    """Import one ``.py`` file as a fresh module; any exception propagates (nothing is left behind)."""
    name = _module_name(path)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def adapter_classes(module: ModuleType) -> list[type[BaseAdapter]]:
    """The concrete BaseAdapter subclasses defined in ``module`` itself."""
    found: list[type[BaseAdapter]] = []
    for _, obj in inspect.getmembers(module, inspect.isclass):
        if (
            issubclass(obj, BaseAdapter)
            and obj is not BaseAdapter
            and obj.__module__ == module.__name__
            and not getattr(obj, "__corral_abstract__", False)
        ):
            found.append(obj)
    return found


def _skip(problems: list[LoadProblem], origin: str, message: str) -> None:
    log.warning("skipping adapter %s: %s", origin, message)
    problems.append(LoadProblem(origin=origin, message=message))


def load_dropin_dir(directory: Path) -> tuple[list[Candidate], list[LoadProblem]]:
    """Import every ``*.py`` in ``directory`` (not ``_*``), each in isolation."""
    candidates: list[Candidate] = []
    problems: list[LoadProblem] = []
    if not directory.is_dir():
        return candidates, problems
    for path in sorted(directory.glob("*.py")):
        if path.name.startswith(("_", ".")):
            continue
        try:
            module = import_module_file(path)
        except (Exception, SystemExit) as exc:
            _skip(problems, str(path), f"{type(exc).__name__}: {exc}")
            continue
        classes = adapter_classes(module)
        if not classes:
            _skip(problems, str(path), "defines no BaseAdapter subclass")
        candidates += [Candidate(adapter_class=c, origin=str(path)) for c in classes]
    return candidates, problems


def load_entry_point_adapters(
    source: EntryPointSource,
) -> tuple[list[Candidate], list[LoadProblem]]:
    """Load group ``corral.adapters``: each entry is a module or a BaseAdapter subclass."""
    candidates: list[Candidate] = []
    problems: list[LoadProblem] = []
    for ep in source(ADAPTERS_GROUP):
        origin = f"entry point {ep.name} = {ep.value}"
        try:
            obj = ep.load()
        except (Exception, SystemExit) as exc:
            _skip(problems, origin, f"{type(exc).__name__}: {exc}")
            continue
        if isinstance(obj, ModuleType):
            classes = adapter_classes(obj)
        elif inspect.isclass(obj) and issubclass(obj, BaseAdapter) and obj is not BaseAdapter:
            classes = [obj]
        else:
            classes = []
        if not classes:
            _skip(problems, origin, "is neither a BaseAdapter subclass nor a module defining one")
        candidates += [Candidate(adapter_class=c, origin=origin) for c in classes]
    return candidates, problems


def manifest_for_class(cls: type[BaseAdapter]) -> Manifest:
    """Synthesize a manifest from an adapter class's identity attributes.

    A drop-in adapter speaks to its agent through its own Python code, so it has no structured
    profile (``streaming.preferred``); its capabilities are its ``cap_*`` flags.
    """
    binary = cls.cli_binary or cls.agent_id
    data = {
        "id": cls.agent_id,
        "displayName": cls.display_name,
        "executables": [binary],
        "launchCommand": binary,
        "supportedPlatforms": list(get_args(Platform)),
        "supportedApprovalPolicies": ["default"],
        "promptInjection": "manual",
        "setupHint": str(getattr(cls, "setup_hint", "") or ""),
    }
    return parse_manifest(data, source=f"adapter class {cls.__qualname__}")


def load_drivers(
    source: EntryPointSource, protocols: Iterable[str]
) -> dict[str, type[BaseAdapter]]:
    """Load group ``corral.drivers`` into a protocol → adapter class mapping; bad entries are logged."""
    known = set(protocols)
    drivers: dict[str, type[BaseAdapter]] = {}
    for ep in source(DRIVERS_GROUP):
        if ep.name not in known:
            log.warning("skipping driver %s: %r is not a known protocol", ep.value, ep.name)
            continue
        try:
            obj = ep.load()
        except (Exception, SystemExit) as exc:
            log.warning("skipping driver %s: %s: %s", ep.value, type(exc).__name__, exc)
            continue
        if not (inspect.isclass(obj) and issubclass(obj, BaseAdapter)):
            log.warning("skipping driver %s: not a BaseAdapter subclass", ep.value)
            continue
        drivers.setdefault(ep.name, obj)
    return drivers
