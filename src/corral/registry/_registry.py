"""The adapter registry: the one path from an adapter id to a manifest and a runnable class.

Every caller — ``corral run``/``chat``/``record``/``conformance``/``adapters``, the service's
session manager and the conformance targets — resolves ids through :meth:`Registry.resolve`.

Manifests (data) come from:

1. built-in manifests, JSON files shipped in ``corral/registry/builtin/``;
2. custom manifests saved under ``home_dir()/adapters/*.json`` (an id taken by a built-in is refused).

Classes (what makes an id runnable) come through one hook, ``register_adapters(register)``
(see :mod:`corral.registry._dropins`), called for, in order:

1. corral's own adapters (:func:`corral.adapters.register_adapters`), attached to their manifests;
2. drop-in modules from ``home_dir()/ext_adapters/`` (or ``$CORRAL_EXT_ADAPTERS_DIR``);
3. the ``corral.adapters`` entry-point group;
4. ``$CORRAL_EXTRA_ADAPTERS`` (``module:Class,…``) and classes a caller passes as ``adapters=``:
   these are the caller's deliberate choice and may replace a built-in class.

A built-in id or alias always names the built-in: a custom manifest, a drop-in or an entry point
that takes one (as its id or as an alias) is skipped as a load problem. ``corral run`` relies on
that rule to resolve a built-in id without building the registry (:mod:`._builtin`).

A class registered without a manifest gets one synthesized from its identity attributes. A manifest
with no class may still be driven by the driver registered for its protocol under the
``corral.drivers`` entry-point group; otherwise it is listed with ``runnable: false`` and the
reason, and shows no capability: capabilities come only from a runnable class's ``cap_*`` flags.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

import msgspec

from .._paths import home_dir
from ..adapters import NOT_RUNNABLE
from ..adapters import register_adapters as register_builtin_adapters
from ..adapters.base import BaseAdapter
from ..errors import AdapterNotFoundError, ConfigError, ManifestError
from ..events import Capabilities
from ..manifests import PROTOCOLS, Manifest, Violation, parse_manifest, read_manifest_file
from ._builtin import BUILTIN_ALIASES, EXTRA_ADAPTERS_ENV, extra_refs, load_builtin_manifests
from ._dropins import (
    AdapterRef,
    EntryPointSource,
    LoadProblem,
    Registration,
    collect,
    installed_entry_points,
    load_drivers,
    load_dropin_dir,
    load_entry_point_adapters,
    load_ref,
    load_references,
    manifest_for_class,
)
from ._lifecycle import Detection, detect_many

log = logging.getLogger("corral.registry")

Source = Literal["builtin", "custom", "dropin", "entry-point", "extra"]


class RegistryEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One adapter the registry knows: its manifest, where it came from, its registered class."""

    manifest: Manifest
    source: Source
    origin: str
    """The file or entry point it was loaded from."""
    ref: AdapterRef | None = None
    """The class registered for this id (or its lazy ``module:Class``); ``None`` for a manifest."""

    @property
    def id(self) -> str:
        return self.manifest.id

    @property
    def adapter_class(self) -> type[BaseAdapter] | None:
        """The registered class when it is already imported (drop-ins, entry points, extras)."""
        return self.ref if isinstance(self.ref, type) else None


class Runnable(msgspec.Struct, frozen=True, kw_only=True):
    """Whether an entry can run, and if not, why."""

    runnable: bool
    reason: str | None = None


def default_ext_dir(home: Path | None = None) -> Path:
    env = os.environ.get("CORRAL_EXT_ADAPTERS_DIR")
    if env:
        return Path(env)
    return (home if home is not None else home_dir()) / "ext_adapters"


class Registry:
    """All adapters corral knows. Build one per use; it reads the disk when constructed.

    ``adapters`` registers classes the caller chooses (tests, embedders); ``use_env=False`` ignores
    ``$CORRAL_EXTRA_ADAPTERS``; ``entry_points=None`` ignores installed entry points;
    ``ext_dir=None`` means the default drop-in directory, ``use_dropins=False`` none at all.
    """

    def __init__(
        self,
        *,
        home: Path | None = None,
        ext_dir: Path | None = None,
        entry_points: EntryPointSource | None = installed_entry_points,
        adapters: Mapping[str, type[BaseAdapter]] | None = None,
        use_env: bool = True,
        use_dropins: bool = True,
    ) -> None:
        self.home = home if home is not None else home_dir()
        self.custom_dir = self.home / "adapters"
        self.ext_dir = ext_dir if ext_dir is not None else default_ext_dir(self.home)
        self._entry_points = entry_points
        self._entries: dict[str, RegistryEntry] = {}
        self._aliases: dict[str, str] = {}
        self._loaded: dict[str, tuple[type[BaseAdapter] | None, str | None]] = {}
        self._drivers: dict[str, type[BaseAdapter]] | None = None
        self.problems: list[LoadProblem] = []
        self.builtin_ids: frozenset[str] = frozenset()
        for manifest in load_builtin_manifests():
            self._entries[manifest.id] = RegistryEntry(
                manifest=manifest,
                source="builtin",
                origin=f"corral/registry/builtin/{manifest.id}.json",
            )
        for reg in collect(register_builtin_adapters, "corral.adapters"):
            self._add(reg, "builtin", replace=True)
        self.builtin_ids = frozenset(self._entries)
        self._load_custom()
        if use_dropins:
            self._add_all(*load_dropin_dir(self.ext_dir), source="dropin")
        if entry_points is not None:
            self._add_all(*load_entry_point_adapters(entry_points), source="entry-point")
        if use_env:
            self._add_all(*load_references(extra_refs(), EXTRA_ADAPTERS_ENV), source="extra")
        if adapters:
            explicit = [
                Registration(agent_id=agent_id, ref=cls, origin="adapters=")
                for agent_id, cls in adapters.items()
            ]
            self._add_all(explicit, [], source="extra")

    # ── loading ──
    def _problem(self, origin: str, message: str) -> None:
        log.warning("skipping adapter %s: %s", origin, message)
        self.problems.append(LoadProblem(origin=origin, message=message))

    def _load_custom(self) -> None:
        if not self.custom_dir.is_dir():
            return
        for path in sorted(self.custom_dir.glob("*.json")):
            try:
                manifest = parse_manifest(read_manifest_file(path), source=str(path))
            except (OSError, ManifestError) as exc:
                self._problem(str(path), str(exc))
                continue
            if manifest.id in self._entries:
                self._problem(str(path), f"id {manifest.id!r} is taken by a built-in adapter")
                continue
            self._entries[manifest.id] = RegistryEntry(
                manifest=manifest, source="custom", origin=str(path)
            )

    def _add_all(
        self, found: list[Registration], problems: list[LoadProblem], *, source: Source
    ) -> None:
        self.problems += problems
        for reg in found:
            self._add(reg, source, replace=source == "extra")

    def _add(self, reg: Registration, source: Source, *, replace: bool) -> None:
        label = reg.origin if isinstance(reg.ref, str) else f"{reg.origin} ({reg.ref.__qualname__})"
        existing = self._entries.get(reg.agent_id)
        if existing is not None and not replace:
            why = (
                "collides with a built-in adapter"
                if existing.source == "builtin"
                else f"is already registered ({existing.source}: {existing.origin})"
            )
            self._problem(label, f"id {reg.agent_id!r} {why}")
            return
        if existing is not None:
            manifest = existing.manifest
        else:
            try:
                manifest = manifest_for_class(load_ref(reg.ref))
            except (Exception, SystemExit) as exc:
                self._problem(label, f"{type(exc).__name__}: {exc}")
                return
        self._entries[reg.agent_id] = RegistryEntry(
            manifest=manifest, source=source, origin=reg.origin, ref=reg.ref
        )
        self._loaded.pop(reg.agent_id, None)
        for alias in reg.aliases:
            if source in ("dropin", "entry-point") and (
                alias in self.builtin_ids or alias in BUILTIN_ALIASES
            ):
                # A built-in's name always means the built-in (registry/_builtin.py relies on it).
                self._problem(label, f"alias {alias!r} is the name of a built-in adapter")
                continue
            self._aliases[alias] = reg.agent_id

    # ── reading ──
    def __iter__(self) -> Iterator[RegistryEntry]:
        return iter(self.entries())

    def __contains__(self, adapter_id: object) -> bool:
        return isinstance(adapter_id, str) and self.canonical_id(adapter_id) in self._entries

    def canonical_id(self, adapter_id: str) -> str:
        """The id an alias (``claude``) stands for; any other id unchanged."""
        return self._aliases.get(adapter_id, adapter_id)

    def entries(self) -> list[RegistryEntry]:
        """Built-ins first (by id), then custom and Python adapters (by id)."""
        return sorted(self._entries.values(), key=lambda e: (e.source != "builtin", e.id))

    def get(self, adapter_id: str) -> RegistryEntry:
        try:
            return self._entries[self.canonical_id(adapter_id)]
        except KeyError:
            raise AdapterNotFoundError(adapter_id) from None

    def manifest(self, adapter_id: str) -> Manifest:
        return self.get(adapter_id).manifest

    def drivers(self) -> dict[str, type[BaseAdapter]]:
        """Protocol → driver class, from entry-point group ``corral.drivers`` (loaded once)."""
        if self._drivers is None:
            source = self._entry_points
            self._drivers = load_drivers(source, PROTOCOLS) if source is not None else {}
        return self._drivers

    def _load(self, entry: RegistryEntry) -> tuple[type[BaseAdapter] | None, str | None]:
        if entry.id in self._loaded:
            return self._loaded[entry.id]
        result: tuple[type[BaseAdapter] | None, str | None]
        if entry.ref is not None:
            try:
                result = (load_ref(entry.ref), None)
            except (Exception, SystemExit) as exc:
                result = (None, f"its class {entry.ref} fails to load: {type(exc).__name__}: {exc}")
        else:
            profile = entry.manifest.structured
            driver = self.drivers().get(profile.protocol) if profile is not None else None
            if driver is not None:
                result = (driver, None)
            elif entry.source == "builtin" and entry.id in NOT_RUNNABLE:
                result = (None, NOT_RUNNABLE[entry.id])
            elif profile is not None and profile.protocol == "acp" and entry.source == "custom":
                # A custom ACP manifest needs no code: the shared ACP driver runs its command.
                from ..adapters.acp_manifest import acp_class_for

                try:
                    result = (acp_class_for(entry.manifest), None)
                except (ConfigError, TypeError) as exc:
                    result = (None, f"its acp launch command cannot be driven: {exc}")
            elif profile is not None and profile.protocol in ("plain-argv", "plain-stdin"):
                # A plain manifest needs no code either: the plain driver runs its command.
                from ..adapters.plain import plain_class_for

                try:
                    result = (plain_class_for(entry.manifest), None)
                except ConfigError as exc:
                    result = (None, f"its plain launch command cannot be driven: {exc}")
            elif profile is None and entry.source == "custom":
                # A custom manifest with no structured profile is shell grade: its command runs
                # in a terminal (adapters/shell.py).
                from ..adapters.shell import shell_class_for

                try:
                    result = (shell_class_for(entry.manifest), None)
                except ConfigError as exc:
                    result = (None, f"its shell profile cannot be driven: {exc}")
            elif profile is not None:
                result = (
                    None,
                    f"a {entry.source} manifest with no driver class: no adapter is registered "
                    f"for this id and no {profile.protocol!r} driver is installed "
                    "(entry-point group corral.drivers)",
                )
            else:
                result = (
                    None,
                    f"a {entry.source} manifest with no structured protocol and no adapter class",
                )
        self._loaded[entry.id] = result
        return result

    def adapter_class(self, adapter_id: str) -> type[BaseAdapter] | None:
        """The class that drives ``adapter_id``, or ``None`` when it cannot run."""
        return self._load(self.get(adapter_id))[0]

    def runnable(self, adapter_id: str) -> Runnable:
        cls, reason = self._load(self.get(adapter_id))
        return Runnable(runnable=cls is not None, reason=reason)

    def resolve(self, adapter_id: str) -> type[BaseAdapter]:
        """The class to launch for ``adapter_id`` (aliases accepted).

        Raises :class:`AdapterNotFoundError` for an unknown id, and for a listed one that cannot
        run (``.reason`` says why).
        """
        entry = self.get(adapter_id)
        cls, reason = self._load(entry)
        if cls is None:
            raise AdapterNotFoundError(adapter_id, reason or "no adapter class")
        return cls

    __call__ = resolve

    def capabilities(self, adapter_id: str) -> tuple[Capabilities, str]:
        """The capabilities to show and where they come from.

        Only a runnable entry has capabilities: its class's ``cap_*`` flags (``"adapter-class"``),
        the claims the real-CLI conformance runs check. A manifest that cannot run shows none
        (``"none"``): a protocol's ceiling is not something any run has shown.
        """
        cls = self.adapter_class(adapter_id)
        if cls is not None:
            return cls.capabilities(), "adapter-class"
        return Capabilities(), "none"

    # ── custom manifests ──
    def add_custom(self, data: Any, *, replace: bool = False) -> Manifest:
        """Validate and save a custom manifest; refuses ids of built-ins and other sources."""
        manifest = parse_manifest(data, source="custom manifest")
        existing = self._entries.get(manifest.id)
        if existing is not None and not (existing.source == "custom" and replace):
            reason = (
                "is the id of a built-in adapter"
                if existing.source == "builtin"
                else f"is already registered ({existing.source}: {existing.origin})"
            )
            v = Violation(path="id", rule="id-available", message=f"{manifest.id!r} {reason}")
            raise ManifestError(f"cannot add {manifest.id!r}: {v.message}", [v])
        self.custom_dir.mkdir(parents=True, exist_ok=True)
        path = self.custom_dir / f"{manifest.id}.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(manifest.to_json(), indent=2) + "\n", encoding="utf-8")
        tmp.replace(path)
        self._entries[manifest.id] = RegistryEntry(
            manifest=manifest, source="custom", origin=str(path)
        )
        return manifest

    def remove_custom(self, adapter_id: str) -> Path:
        """Delete a custom manifest; built-ins and Python adapters cannot be removed this way."""
        entry = self.get(adapter_id)
        if entry.source != "custom":
            raise ConfigError(f"{adapter_id!r} is a {entry.source} adapter, not a custom manifest")
        path = Path(entry.origin)
        path.unlink(missing_ok=True)
        del self._entries[adapter_id]
        return path


async def detect_entries(
    entries: list[RegistryEntry], *, timeout: float = 15.0, path: str | None = None
) -> list[Detection]:
    """Detect each entry, in order.

    A Python adapter that overrides ``detect()`` answers for itself (seed 003: detection lives on
    the adapter class); every other entry goes through :func:`detect` on its manifest.
    """
    own = {i for i, e in enumerate(entries) if _detects_itself(e)}
    by_manifest = iter(
        await detect_many(
            [e.manifest for i, e in enumerate(entries) if i not in own], timeout=timeout, path=path
        )
    )
    out: list[Detection] = []
    for i, entry in enumerate(entries):
        out.append(await _class_detect(entry, timeout) if i in own else next(by_manifest))
    return out


def _detects_itself(entry: RegistryEntry) -> bool:
    cls = entry.adapter_class
    return cls is not None and any(
        "detect" in vars(k) for k in cls.__mro__ if k is not BaseAdapter and k is not object
    )


async def _class_detect(entry: RegistryEntry, timeout: float) -> Detection:
    assert entry.adapter_class is not None
    found = await entry.adapter_class.detect(timeout=timeout)
    if found is None:
        return Detection(adapter_id=entry.id, status="missing")
    return Detection(
        adapter_id=entry.id,
        status="installed",
        executable=entry.adapter_class.cli_binary,
        path=found.path,
        source="adapter-class",
        version=found.version,
    )
