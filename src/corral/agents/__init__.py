"""The pinned agent CLIs: which versions, where they are installed, and installing them.

    >>> from corral import agents
    >>> [p.name for p in agents.pinned()][:2]
    ['claude', 'codex']
    >>> agents.locate("claude")            # the pinned install, else PATH, else None
    PosixPath('/root/.cache/corral/agents/claude/2.1.197/node_modules/.bin/claude')
    >>> agents.install(["claude"])          # no-op when already installed

Versions live in ``pins.toml`` next to this file; nothing else pins them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

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
from ._pins import Pin, get_pin, pinned, platform_tag

if TYPE_CHECKING:
    from ._install import InstallEvent, InstallResult, InstallState, install, verify

# Installing (subprocess, threads, temp dirs) loads on first use: ``locate`` is on the path of
# every ``corral launch`` (benchmark P3) and needs none of it.
_INSTALL_NAMES = ("InstallEvent", "InstallResult", "InstallState", "install", "verify")


def __getattr__(name: str) -> Any:
    if name in _INSTALL_NAMES:
        from . import _install

        return getattr(_install, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AgentStatus",
    "InstallEvent",
    "InstallResult",
    "InstallState",
    "Pin",
    "agents_root",
    "get_pin",
    "install",
    "locate",
    "pinned",
    "platform_tag",
    "status",
    "verify",
]


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


def locate(name: str, prefix: Path | str | None = None) -> Path | None:
    """The pinned binary of agent ``name`` when installed, else ``name`` on PATH, else ``None``.

    Unknown names (not in pins.toml) are looked up on PATH only.
    """
    pin = next((p for p in pinned() if p.name == name), None)
    if pin is None:
        return which(name)
    found = locate_in(pin, agents_root(prefix))
    return found if found is not None else which(pin.bin)


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
