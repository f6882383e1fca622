"""Pinned versus installed, per agent: the rows of ``corral agents list``."""

from __future__ import annotations

from pathlib import Path

import msgspec

from ._layout import (
    agents_root,
    find_binary,
    install_dir,
    installed_version,
    locate_in,
    read_marker,
    which,
)
from ._pins import get_pin, pinned


class AgentStatus(msgspec.Struct, frozen=True, kw_only=True):
    """Pinned versus installed, for ``corral agents list``."""

    name: str
    package: str
    registry: str
    pinned: str
    installed: str | None
    """Version found in the pinned install dir (from package metadata), or ``None``."""
    verified: bool
    """The install finished and its ``--version`` was checked (the marker file exists)."""
    path: str | None
    """The binary ``locate`` returns: the pinned install, else one on PATH, else ``None``."""
    source: str
    """``pinned`` (corral's install dir), ``path`` (found on PATH only) or ``missing``."""


def status(names: list[str] | None = None, prefix: Path | str | None = None) -> list[AgentStatus]:
    """Pinned versus installed for the named agents (all when empty). Starts no process."""
    pins = [get_pin(n) for n in names] if names else pinned()
    root = agents_root(prefix)
    rows = []
    for pin in pins:
        directory = install_dir(pin, root)
        pinned_bin = locate_in(pin, root)
        on_path = which(pin.bin) if pinned_bin is None else None
        path = pinned_bin or on_path
        rows.append(
            AgentStatus(
                name=pin.name,
                package=pin.package,
                registry=pin.registry,
                pinned=pin.version,
                installed=installed_version(pin, directory),
                verified=read_marker(pin, directory) is not None
                and find_binary(pin, directory) is not None,
                path=str(path) if path else None,
                source="pinned" if pinned_bin else ("path" if on_path else "missing"),
            )
        )
    return rows
