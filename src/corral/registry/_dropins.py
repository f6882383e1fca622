"""Where adapter classes come from, all through one hook: ``register_adapters(register)``.

Every source of adapter classes — corral's own (:func:`corral.adapters.register_adapters`), the
``corral.adapters`` entry-point group, drop-in modules in a directory, ``CORRAL_EXTRA_ADAPTERS`` and
classes a caller passes in — is turned into calls of one ``register`` function (the simonw/llm
``register_models(register)`` pattern). A plugin object (an entry point's target or a drop-in module)
is registered by :func:`register_plugin`:

* it has a ``register_adapters`` callable: that is called with ``register``;
* it is a BaseAdapter subclass: it is registered;
* it is a module without the hook: every concrete BaseAdapter subclass *defined* in it is registered.

Each module is imported on its own. Importing it runs the BaseAdapter contract check, so a module
whose adapter class breaks the contract raises ``TypeError`` while importing: that module, like one
with a syntax or import error, is logged and skipped, and the others still load.
"""

from __future__ import annotations

import inspect
import logging
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, get_args

import msgspec

from ..adapters.base import BaseAdapter
from ..errors import ConfigError
from ..manifests import Manifest, Platform, parse_manifest
from ._builtin import load_ref as load_ref  # one definition, shared with the built-in path

log = logging.getLogger("corral.registry")

ADAPTERS_GROUP = "corral.adapters"
"""Entry-point group of third-party adapters: a module, a hook or a BaseAdapter subclass per entry."""
DRIVERS_GROUP = "corral.drivers"
"""Entry-point group of protocol drivers: entry name = protocol name, value = BaseAdapter subclass."""
HOOK = "register_adapters"
"""The name of the registration hook a plugin module defines."""


class EntryPointLike(Protocol):
    name: str
    value: str

    def load(self) -> Any: ...


EntryPointSource = Callable[[str], Iterable[EntryPointLike]]


def installed_entry_points(group: str) -> Iterable[EntryPointLike]:
    import importlib.metadata  # the scan of installed distributions: only when asked for

    return importlib.metadata.entry_points(group=group)


class LoadProblem(msgspec.Struct, frozen=True, kw_only=True):
    """Something that was skipped while loading the registry, and why."""

    origin: str
    message: str


AdapterRef = type[BaseAdapter] | str
"""A class, or ``"module:Class"`` imported only when the class is first needed."""


class Register(Protocol):
    """The function a ``register_adapters`` hook is called with."""

    def __call__(
        self, adapter: AdapterRef, *, agent_id: str | None = None, aliases: Sequence[str] = ()
    ) -> None: ...


class Registration(msgspec.Struct, frozen=True, kw_only=True):
    """One ``register(...)`` call: an id, its class (or a lazy reference) and its aliases."""

    agent_id: str
    ref: AdapterRef
    origin: str
    aliases: tuple[str, ...] = ()


def collect(hook: Callable[[Register], object], origin: str) -> list[Registration]:
    """Call ``hook(register)`` and return what it registered (it may raise)."""
    found: list[Registration] = []

    def register(
        adapter: AdapterRef, *, agent_id: str | None = None, aliases: Sequence[str] = ()
    ) -> None:
        if isinstance(adapter, str):
            if not agent_id:
                raise ConfigError(f"register({adapter!r}) needs agent_id= for a lazy reference")
        else:
            adapter = load_ref(adapter)
            if agent_id is not None and agent_id != adapter.agent_id:
                raise ConfigError(
                    f"register({adapter.__qualname__}, agent_id={agent_id!r}) "
                    f"contradicts its agent_id {adapter.agent_id!r}"
                )
            agent_id = adapter.agent_id
        found.append(
            Registration(agent_id=agent_id, ref=adapter, origin=origin, aliases=tuple(aliases))
        )

    hook(register)
    return found


def _module_name(path: Path) -> str:
    import hashlib

    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:10]
    return f"corral_ext_adapters.{path.stem}_{digest}"


def import_module_file(path: Path) -> ModuleType:
    """Import one ``.py`` file as a fresh module; any exception propagates (nothing is left behind)."""
    import importlib.util

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


def plugin_hook(obj: object) -> Callable[[Register], object] | None:
    """The ``register_adapters`` hook standing for ``obj``, or ``None`` if it registers nothing."""
    hook = getattr(obj, HOOK, None)
    if callable(hook):
        return hook  # type: ignore[no-any-return]
    if inspect.isclass(obj) and issubclass(obj, BaseAdapter) and obj is not BaseAdapter:
        cls = obj
        return lambda register: register(cls)
    if isinstance(obj, ModuleType):
        classes = adapter_classes(obj)
        if not classes:
            return None

        def register_all(register: Register) -> None:
            for c in classes:
                register(c)

        return register_all
    if inspect.isfunction(obj):
        return obj
    return None


def _skip(problems: list[LoadProblem], origin: str, message: str) -> None:
    log.warning("skipping adapter %s: %s", origin, message)
    problems.append(LoadProblem(origin=origin, message=message))


def register_plugin(
    obj: object, origin: str, problems: list[LoadProblem], *, empty: str
) -> list[Registration]:
    """Everything plugin ``obj`` registers; a plugin that fails or registers nothing is a problem."""
    hook = plugin_hook(obj)
    if hook is None:
        _skip(problems, origin, empty)
        return []
    try:
        found = collect(hook, origin)
    except (Exception, SystemExit) as exc:
        _skip(problems, origin, f"{type(exc).__name__}: {exc}")
        return []
    if not found:
        _skip(problems, origin, empty)
    return found


def load_dropin_dir(directory: Path) -> tuple[list[Registration], list[LoadProblem]]:
    """Import every ``*.py`` in ``directory`` (not ``_*``), each in isolation."""
    found: list[Registration] = []
    problems: list[LoadProblem] = []
    if not directory.is_dir():
        return found, problems
    for path in sorted(directory.glob("*.py")):
        if path.name.startswith(("_", ".")):
            continue
        try:
            module = import_module_file(path)
        except (Exception, SystemExit) as exc:
            _skip(problems, str(path), f"{type(exc).__name__}: {exc}")
            continue
        found += register_plugin(
            module, str(path), problems, empty="defines no BaseAdapter subclass"
        )
    return found, problems


def load_entry_point_adapters(
    source: EntryPointSource,
) -> tuple[list[Registration], list[LoadProblem]]:
    """Load group ``corral.adapters``: each entry is a hook, a module or a BaseAdapter subclass."""
    found: list[Registration] = []
    problems: list[LoadProblem] = []
    for ep in source(ADAPTERS_GROUP):
        origin = f"entry point {ep.name} = {ep.value}"
        try:
            obj = ep.load()
        except (Exception, SystemExit) as exc:
            _skip(problems, origin, f"{type(exc).__name__}: {exc}")
            continue
        found += register_plugin(
            obj,
            origin,
            problems,
            empty="is neither a register_adapters hook, a BaseAdapter subclass "
            "nor a module defining one",
        )
    return found, problems


def load_references(
    refs: Iterable[str], origin: str
) -> tuple[list[Registration], list[LoadProblem]]:
    """``module:Class`` references (``CORRAL_EXTRA_ADAPTERS``), each registered through the hook."""
    found: list[Registration] = []
    problems: list[LoadProblem] = []
    for ref in refs:
        try:
            cls = load_ref(ref)
        except (Exception, SystemExit) as exc:
            _skip(problems, f"{origin} {ref}", f"{type(exc).__name__}: {exc}")
            continue
        found += register_plugin(cls, f"{origin} {ref}", problems, empty="registers nothing")
    return found, problems


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
