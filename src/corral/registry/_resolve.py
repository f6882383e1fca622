"""Executable resolution (seed 000 ``resolve_executable_path``): PATH, PATHEXT, ``.cmd`` shims, pins.

Pure lookups on the file system: nothing is started here. Every input that depends on the host
(``PATH``, ``PATHEXT``, the platform) is a parameter, so a Windows lookup can be exercised on Linux.

Search order — the one lookup shared by detect, probe, verify, repair and every adapter's launch
(:func:`corral.adapters.base.find_binary`): corral's pinned install of the name when it is complete
(the rule of :func:`corral.agents.locate`), then the directories of ``PATH``, then any other version
in the pinned-agents cache (``cache_dir()/agents/<name>/<version>/node_modules/.bin`` and
``…/venv/bin``, newest version first).
"""

from __future__ import annotations

import itertools
import os
import sys

from .._record import dataclass

# Every adapter's launch resolves its binary here, ``corral run``'s early spawn too: so no
# msgspec, ``typing`` or ``re`` at import (decision 049), and a look-up on strings, without
# ``pathlib`` (decision 056).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from pathlib import Path
    from typing import Literal

    HostPlatform = Literal["linux", "macos", "windows"]
else:
    HostPlatform = str

WINDOWS_DEFAULT_PATHEXT = ".COM;.EXE;.BAT;.CMD"
WINDOWS_SHIM_SUFFIXES = (".cmd", ".bat")
CMD_WRAPPER = ("cmd.exe", "/d", "/s", "/c")
"""How a ``.cmd``/``.bat`` shim is launched: batch files are not executables to CreateProcess."""


@dataclass(frozen=True, kw_only=True)
class ResolvedExecutable:
    """Where an executable was found and the argv prefix that launches it."""

    name: str
    path: str
    argv: tuple[str, ...]
    """``(path,)``, or ``("cmd.exe", "/d", "/s", "/c", path)`` for a Windows batch shim."""
    source: Literal["path", "pinned", "explicit"]


def current_platform() -> HostPlatform:
    if os.name == "nt":
        return "windows"
    return "macos" if sys.platform == "darwin" else "linux"


def _version_key(name: str) -> tuple[tuple[int, int | str], ...]:
    import re

    parts = re.split(r"[.+-]", name)
    return tuple((0, int(p)) if p.isdigit() else (-1, p) for p in parts)


def pinned_bin_dirs(name: str, *, cache: Path | None = None) -> list[Path]:
    """Binary directories of corral's pinned copies of agent ``name``, newest version first.

    The layout (``agents/<name>/<version>/node_modules/.bin`` for npm packages,
    ``…/venv/bin`` for PyPI ones) is owned by ``corral agents``; this is the registry's read side.
    """
    from ..agents._layout import agents_root

    root = (cache / "agents" if cache is not None else agents_root()) / name
    if not root.is_dir():
        return []
    versions = sorted(
        (p for p in root.iterdir() if p.is_dir()), key=lambda p: _version_key(p.name), reverse=True
    )
    dirs: list[Path] = []
    for version in versions:
        for sub in ("node_modules/.bin", "venv/bin", "venv/Scripts"):
            candidate = version / sub
            if candidate.is_dir():
                dirs.append(candidate)
    return dirs


def pinned_executable(name: str) -> Path | None:
    """corral's pinned install of agent executable ``name`` when that install is complete."""
    from pathlib import Path

    found = _pinned_path(name)
    return None if found is None else Path(found)


def _pinned_path(name: str) -> str | None:
    """:func:`pinned_executable` as a string, without ``pathlib``."""
    from ..agents import pinned
    from ..agents._layout import agents_root_str, locate_path

    for pin in pinned():
        if name == pin.bin:
            return locate_path(pin, agents_root_str())
    return None


def _candidates(name: str, platform: HostPlatform, pathext: str | None) -> list[str]:
    if platform != "windows":
        return [name]
    exts = [e for e in (pathext or WINDOWS_DEFAULT_PATHEXT).split(";") if e]
    if any(name.lower().endswith(e.lower()) for e in exts):
        return [name]
    names: list[str] = []
    for ext in exts:
        # Windows file systems ignore case; a simulated one may not, so try both spellings.
        for spelling in (ext, ext.lower()):
            if name + spelling not in names:
                names.append(name + spelling)
    return names


def _is_launchable(path: str, platform: HostPlatform) -> bool:
    if not os.path.isfile(path):
        return False
    return platform == "windows" or os.access(path, os.X_OK)


def _launch_argv(path: str, platform: HostPlatform) -> tuple[str, ...]:
    if platform == "windows" and path.lower().endswith(WINDOWS_SHIM_SUFFIXES):
        return (*CMD_WRAPPER, path)
    return (path,)


def resolve_executable_path(
    name: str,
    *,
    path: str | None = None,
    pathext: str | None = None,
    platform: HostPlatform | None = None,
    extra_dirs: Sequence[Path] | None = None,
) -> ResolvedExecutable | None:
    """Find executable ``name``; ``None`` when it is nowhere.

    ``path`` and ``pathext`` default to the environment's ``PATH``/``PATHEXT``; ``platform`` to
    this host. A name containing a directory separator is checked as given. ``extra_dirs``
    (pinned directories) are searched before ``PATH``; by default, the complete pinned install of
    ``name`` (:func:`pinned_executable`) comes first and :func:`pinned_bin_dirs` after ``PATH``.
    """
    plat = platform or current_platform()
    if path is None:
        path = os.environ.get("PATH", "")
    if pathext is None and plat == "windows":
        pathext = os.environ.get("PATHEXT")
    seps = ("/", "\\") if plat == "windows" else ("/",)
    candidates = _candidates(name, plat, pathext)

    if any(s in name for s in seps):
        for cand in candidates:
            if _is_launchable(cand, plat):
                return ResolvedExecutable(
                    name=name, path=cand, argv=_launch_argv(cand, plat), source="explicit"
                )
        return None

    pathsep = ";" if plat == "windows" else ":"
    on_path: list[tuple[str, Literal["path", "pinned"]]] = [
        (d, "path") for d in path.split(pathsep) if d
    ]
    searched: Iterable[tuple[str, Literal["path", "pinned"]]]
    if extra_dirs is None:
        pinned = _pinned_path(name)
        if pinned is not None and _is_launchable(pinned, plat):
            return ResolvedExecutable(
                name=name, path=pinned, argv=_launch_argv(pinned, plat), source="pinned"
            )
        # The other pinned versions are listed only when PATH has none (they need ``pathlib``).
        later: Iterable[tuple[str, Literal["path", "pinned"]]] = (
            (os.fspath(d), "pinned") for d in pinned_bin_dirs(name)
        )
        searched = itertools.chain(on_path, later)
    else:
        searched = [*((os.fspath(d), "pinned") for d in extra_dirs), *on_path]
    for directory, source in searched:
        for cand in candidates:
            full = os.path.join(directory, cand)
            if _is_launchable(full, plat):
                return ResolvedExecutable(
                    name=name, path=full, argv=_launch_argv(full, plat), source=source
                )
    return None
