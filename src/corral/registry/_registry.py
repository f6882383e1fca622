"""The adapter registry: built-in manifests, custom manifests, drop-in and entry-point adapters.

Sources, in order of precedence (an id belongs to the first source that claims it):

1. built-in manifests, JSON files shipped in ``corral/registry/builtin/``;
2. custom manifests saved under ``home_dir()/adapters/*.json`` (an id taken by a built-in is refused);
3. drop-in adapter modules from ``home_dir()/ext_adapters/`` (or ``$CORRAL_EXT_ADAPTERS_DIR``) and
   adapters from the ``corral.adapters`` entry-point group; each class gets a synthesized manifest.

The Python class that drives an entry (:meth:`Registry.adapter_class`) is the drop-in's own class,
or else the driver registered for the manifest's protocol under entry-point group ``corral.drivers``.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import msgspec

from .._paths import home_dir
from ..adapters import builtin_adapter_class
from ..adapters.base import BaseAdapter
from ..errors import AdapterNotFoundError, ConfigError, ManifestError
from ..events import Capabilities
from ..manifests import PROTOCOLS, Manifest, Violation, parse_manifest, read_manifest_file
from ._dropins import (
    EntryPointSource,
    LoadProblem,
    installed_entry_points,
    load_drivers,
    load_dropin_dir,
    load_entry_point_adapters,
    manifest_for_class,
)
from ._lifecycle import Detection, detect_many

log = logging.getLogger("corral.registry")

Source = Literal["builtin", "custom", "dropin", "entry-point"]


class RegistryEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One adapter the registry knows: its manifest, where it came from, its own class if any."""

    manifest: Manifest
    source: Source
    origin: str
    """The file or entry point it was loaded from."""
    adapter_class: type[BaseAdapter] | None = None

    @property
    def id(self) -> str:
        return self.manifest.id


def load_builtin_manifests() -> list[Manifest]:
    """The manifests shipped with corral, sorted by id."""
    folder = resources.files("corral.registry") / "builtin"
    manifests = []
    for item in sorted(folder.iterdir(), key=lambda p: p.name):
        if item.name.endswith(".json"):
            manifests.append(parse_manifest(json.loads(item.read_text("utf-8")), source=item.name))
    return manifests


def default_ext_dir(home: Path | None = None) -> Path:
    env = os.environ.get("CORRAL_EXT_ADAPTERS_DIR")
    if env:
        return Path(env)
    return (home if home is not None else home_dir()) / "ext_adapters"


class Registry:
    """All adapters corral can launch. Build one per use; it reads the disk when constructed."""

    def __init__(
        self,
        *,
        home: Path | None = None,
        ext_dir: Path | None = None,
        entry_points: EntryPointSource | None = installed_entry_points,
    ) -> None:
        self.home = home if home is not None else home_dir()
        self.custom_dir = self.home / "adapters"
        self.ext_dir = ext_dir if ext_dir is not None else default_ext_dir(self.home)
        self._entry_points = entry_points
        self._entries: dict[str, RegistryEntry] = {}
        self._drivers: dict[str, type[BaseAdapter]] | None = None
        self.problems: list[LoadProblem] = []
        for manifest in load_builtin_manifests():
            self._entries[manifest.id] = RegistryEntry(
                manifest=manifest,
                source="builtin",
                origin=f"corral/registry/builtin/{manifest.id}.json",
            )
        self.builtin_ids = frozenset(self._entries)
        self._load_custom()
        self._load_python_adapters()

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

    def _load_python_adapters(self) -> None:
        candidates, problems = load_dropin_dir(self.ext_dir)
        sources: list[Source] = ["dropin"] * len(candidates)
        self.problems += problems
        if self._entry_points is not None:
            more, problems = load_entry_point_adapters(self._entry_points)
            candidates += more
            sources += ["entry-point"] * len(more)
            self.problems += problems
        for cand, source in zip(candidates, sources, strict=True):
            cls = cand.adapter_class
            label = f"{cand.origin} ({cls.__qualname__})"
            if cls.agent_id in self.builtin_ids:
                self._problem(label, f"id {cls.agent_id!r} collides with a built-in adapter")
                continue
            if cls.agent_id in self._entries:
                self._problem(label, f"id {cls.agent_id!r} is already registered")
                continue
            try:
                manifest = manifest_for_class(cls)
            except ManifestError as exc:
                self._problem(label, str(exc))
                continue
            self._entries[cls.agent_id] = RegistryEntry(
                manifest=manifest, source=source, origin=cand.origin, adapter_class=cls
            )

    # ── reading ──
    def __iter__(self) -> Iterator[RegistryEntry]:
        return iter(self.entries())

    def __contains__(self, adapter_id: object) -> bool:
        return adapter_id in self._entries

    def entries(self) -> list[RegistryEntry]:
        """Built-ins first (by id), then custom and Python adapters (by id)."""
        return sorted(self._entries.values(), key=lambda e: (e.source != "builtin", e.id))

    def get(self, adapter_id: str) -> RegistryEntry:
        try:
            return self._entries[adapter_id]
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

    def adapter_class(self, adapter_id: str) -> type[BaseAdapter] | None:
        """The class that drives ``adapter_id``: its own (drop-in) class, corral's built-in class
        for a built-in id, else its protocol's driver."""
        entry = self.get(adapter_id)
        if entry.adapter_class is not None:
            return entry.adapter_class
        builtin = builtin_adapter_class(adapter_id) if entry.source == "builtin" else None
        if builtin is not None:
            return builtin
        profile = entry.manifest.structured
        return self.drivers().get(profile.protocol) if profile is not None else None

    def capabilities(self, adapter_id: str) -> tuple[Capabilities, str]:
        """The capabilities to show and where they come from.

        An entry with its own class reports the class's ``cap_*`` claims (``"adapter-class"``);
        a structured manifest reports its protocol's ceiling (``"protocol"``); otherwise none.
        """
        entry = self.get(adapter_id)
        if entry.adapter_class is not None:
            return entry.adapter_class.capabilities(), "adapter-class"
        if entry.manifest.structured is not None:
            return entry.manifest.structured.spec.capabilities, "protocol"
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
