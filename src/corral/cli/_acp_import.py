"""``corral adapters import-acp FILE|DIR``: ACP registry entries → custom manifests (+ installs).

A path is one ``agent.json``, a registry index (``{"agents": [...]}``), or a directory holding
either (``*/agent.json`` as in the registry repository, and ``*.json``). Each entry becomes the
custom manifest ``acp.<id>`` (:mod:`corral.manifests._acp_registry`), run by the shared ACP driver
(:mod:`corral.adapters.acp_manifest`). An entry whose npm/PyPI package corral pins is installed
through ``corral agents install`` (the pinned version: the pins are what corral verifies); other
packages are reported, not installed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agents import Pin, pinned
from ..errors import ConfigError
from ..manifests._acp_registry import DEFAULT_PREFIX, AcpEntry, convert
from ..registry import Registry

MAX_FILE_BYTES = 1_000_000


@dataclass
class Imported:
    id: str
    file: str
    entry_id: str
    entry_version: str
    package: str | None
    pin: str | None = None
    pin_version: str | None = None
    installed: bool = False
    runnable: bool = False
    reason: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _load(path: Path) -> Any:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ConfigError(f"{path}: larger than {MAX_FILE_BYTES} bytes")
        return json.loads(path.read_text("utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not JSON: {exc}") from exc


def read_entries(path: Path) -> list[tuple[Path, Any]]:
    """Every entry under ``path``, with the file it came from, in a stable order."""
    if path.is_dir():
        files = sorted({*path.glob("*/agent.json"), *path.glob("*.json")})
        if not files:
            raise ConfigError(f"{path}: no agent.json or *.json files")
    elif path.exists():
        files = [path]
    else:
        raise ConfigError(f"{path}: no such file or directory")
    entries: list[tuple[Path, Any]] = []
    for file in files:
        data = _load(file)
        if isinstance(data, dict) and isinstance(data.get("agents"), list):
            entries.extend((file, item) for item in data["agents"])
        elif isinstance(data, dict) and "distribution" in data:
            entries.append((file, data))
        elif path.is_dir():
            continue  # some other JSON file in the directory (a schema, a lock file)
        else:
            raise ConfigError(f"{file}: neither an ACP registry entry nor a registry index")
    return entries


def pins_by_package() -> dict[str, Pin]:
    return {pin.package: pin for pin in pinned()}


def _convert(data: Any, prefix: str, pins: dict[str, Pin]) -> AcpEntry:
    bins = {pkg: pin.bins for pkg, pin in pins.items()}
    by_bin = {b: pin for pin in pins.values() for b in pin.bins}
    converted = convert(data, prefix=prefix, bins_for=bins)
    if converted.package is None:
        # A binary distribution: corral does not download it, but its command may be a pin's.
        pin = by_bin.get(converted.manifest["executables"][0])
        if pin is not None:
            converted.manifest["install"] = (
                {"npm": pin.package} if pin.registry == "npm" else {"pip": pin.package}
            )
    return converted


def import_entries(
    path: Path,
    *,
    install: bool = True,
    prefix: str = DEFAULT_PREFIX,
    registry: Registry | None = None,
) -> list[Imported]:
    """Import every entry under ``path`` into ``registry``'s custom manifests."""
    from .. import agents

    registry = registry or Registry()
    pins = pins_by_package()
    results: list[Imported] = []
    for file, data in read_entries(path):
        converted = _convert(data, prefix, pins)
        manifest_id = converted.manifest["id"]
        again = manifest_id in registry and registry.get(manifest_id).source == "custom"
        registry.add_custom(converted.manifest, replace=again)
        pkg = converted.package
        install_pkg = (converted.manifest.get("install") or {}).values()
        pin = next((pins[p] for p in install_pkg if p in pins), None)
        result = Imported(
            id=manifest_id,
            file=str(file),
            entry_id=converted.entry_id,
            entry_version=converted.version,
            package=None if pkg is None else f"{pkg.name}@{pkg.version or 'latest'}",
            pin=pin.name if pin else None,
            pin_version=pin.version if pin else None,
            notes=list(converted.notes),
        )
        if pin is None and pkg is not None:
            result.notes.append(f"{pkg.name} is not pinned by corral: not installed")
        elif pin is not None and pkg is not None and pkg.version and pkg.version != pin.version:
            result.notes.append(
                f"the entry names {pkg.version}; corral installs and verifies its pin {pin.version}"
            )
        if install and pin is not None:
            agents.install([pin.name])
            result.installed = True
        runnable = registry.runnable(manifest_id)
        result.runnable, result.reason = runnable.runnable, runnable.reason
        results.append(result)
    return results
