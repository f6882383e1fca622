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

from ._layout import agents_root, locate_in, which
from ._pins import Pin, get_pin, pinned, platform_tag

TYPE_CHECKING = False  # ``typing`` itself costs corral launch's start-up (decision 036)

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ._install import InstallEvent, InstallResult, InstallState, install, verify
    from ._latest import LatestResult, install_latest, latest_root, locate_latest
    from ._pin_edit import write_version
    from ._status import AgentStatus, status

# Installing (subprocess, threads, temp dirs) and the status rows (msgspec) load on first use:
# ``locate`` is on the path of every ``corral launch`` (benchmark P3) and needs none of it.
_LAZY = {
    "InstallEvent": "_install",
    "InstallResult": "_install",
    "InstallState": "_install",
    "install": "_install",
    "verify": "_install",
    "AgentStatus": "_status",
    "LatestResult": "_latest",
    "install_latest": "_latest",
    "latest_root": "_latest",
    "locate_latest": "_latest",
    "write_version": "_pin_edit",
    "status": "_status",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{module}", __name__), name)


__all__ = [
    "AgentStatus",
    "InstallEvent",
    "InstallResult",
    "InstallState",
    "LatestResult",
    "Pin",
    "agents_root",
    "get_pin",
    "install",
    "install_latest",
    "latest_root",
    "locate",
    "locate_latest",
    "pinned",
    "platform_tag",
    "status",
    "verify",
    "write_version",
]


def locate(name: str, prefix: Path | str | None = None) -> Path | None:
    """The pinned binary of agent ``name`` when installed, else ``name`` on PATH, else ``None``.

    Unknown names (not in pins.toml) are looked up on PATH only.
    """
    pin = next((p for p in pinned() if p.name == name), None)
    if pin is None:
        return which(name)
    found = locate_in(pin, agents_root(prefix))
    return found if found is not None else which(pin.bin)
