"""Where a pinned CLI lives on disk, and how to tell that it is installed.

Layout (one directory per agent and version, so two versions never collide)::

    <root>/<name>/<version>/                  root: --prefix, $CORRAL_AGENTS_DIR or cache_dir()/agents
        node_modules/.bin/<bin>               npm pins (an npm --prefix dir)
        venv/bin/<bin>                        pypi pins (a virtualenv)
        install.log                           the installer's output
        .corral-installed.json                written only after a verified install

A directory without the marker is either half-installed (a crash: redo it) or laid out by hand
or by an older corral (adopt it once the package metadata and ``--version`` agree with the pin).

The look-up itself (:func:`locate_path`, :func:`agents_root_str`) works on strings: it runs
before ``corral run``'s early spawn, which does not import ``pathlib`` (decision 056); the
functions that return a ``Path`` wrap it.
"""

from __future__ import annotations

import os
import sys

from .._paths import cache_str
from .._record import dataclass, field_names
from ._pins import Pin, platform_tag

TYPE_CHECKING = False  # ``typing`` itself costs corral launch's start-up (decision 036)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

MARKER = ".corral-installed.json"
_EXEC_MAGIC = (b"#!", b"\x7fELF", b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe", b"MZ")


@dataclass(frozen=True, kw_only=True)
class Marker:
    """What the marker file records about a finished install (plain JSON: ``locate`` reads it
    before every ``corral launch``)."""

    name: str
    package: str
    version: str
    binary: str
    version_output: str
    installed_at: str
    seconds: float


def agents_root(prefix: Path | str | None = None) -> Path:
    """Root of the agent installs: ``prefix``, else ``$CORRAL_AGENTS_DIR``, else the cache dir."""
    from pathlib import Path

    return Path(agents_root_str(prefix))


def agents_root_str(prefix: Path | str | None = None) -> str:
    """:func:`agents_root` as the string it is made from."""
    if prefix is not None:
        return os.fspath(prefix)
    env = os.environ.get("CORRAL_AGENTS_DIR")
    return env if env else os.path.join(cache_str(), "agents")


def install_dir(pin: Pin, root: Path) -> Path:
    from pathlib import Path

    return Path(_install_path(pin, os.fspath(root)))


def _install_path(pin: Pin, root: str) -> str:
    return os.path.join(root, pin.name, pin.version)


def _bin_dir(pin: Pin, directory: str) -> str:
    if pin.registry == "pypi":
        return os.path.join(directory, "venv", "Scripts" if sys.platform == "win32" else "bin")
    return os.path.join(directory, "node_modules", ".bin")


def _is_real_executable(path: str) -> bool:
    """True for a runnable file; False for npm's no-shebang placeholder stubs."""
    try:
        if not os.path.isfile(path) or not os.access(path, os.X_OK):
            return False
        with open(path, "rb") as fh:
            head = fh.read(4)
    except OSError:
        return False
    return head.startswith(_EXEC_MAGIC)


def find_binary(pin: Pin, directory: Path, bin_name: str | None = None) -> Path | None:
    """The runnable ``bin_name`` (default: the agent's own bin) inside one install dir, if any.

    When npm skipped install scripts, claude's and opencode's ``bin/*.exe`` stay placeholders;
    then the binary inside the platform package (``fallback`` in pins.toml) is used instead.
    """
    from pathlib import Path

    found = _find_binary(pin, os.fspath(directory), bin_name)
    return None if found is None else Path(found)


def _find_binary(pin: Pin, directory: str, bin_name: str | None = None) -> str | None:
    name = bin_name or pin.bin
    candidate = os.path.join(_bin_dir(pin, directory), name)
    if _is_real_executable(candidate):
        return candidate
    if name == pin.bin:
        for pattern in pin.fallback:
            path = os.path.join(directory, pattern.format(platform=platform_tag()))
            if _is_real_executable(path):
                return path
    return None


def installed_version(pin: Pin, directory: Path | str) -> str | None:
    """The package version the install dir holds, from package metadata (no process started)."""
    from corral._lean_json import loads

    if pin.registry == "npm":
        meta = os.path.join(directory, "node_modules", pin.package, "package.json")
        try:
            with open(meta, "rb") as fh:
                data = loads(fh.read())
        except (OSError, ValueError):
            return None
        version = data.get("version") if isinstance(data, dict) else None
        return version if isinstance(version, str) else None
    from pathlib import Path

    normalized = pin.package.replace("-", "_").lower()
    for site in (Path(directory) / "venv").glob("lib*/python*/site-packages"):
        for dist in site.glob("*.dist-info"):
            dist_name, _, version = dist.name[: -len(".dist-info")].rpartition("-")
            if dist_name.replace("-", "_").lower() == normalized:
                return version
    return None


def read_marker(pin: Pin, directory: Path | str) -> Marker | None:
    """The marker of a finished install of exactly this pin, or ``None``."""
    from corral._lean_json import loads  # not json: this runs before the early spawn (decision 057)

    try:
        with open(os.path.join(directory, MARKER), "rb") as fh:
            data = loads(fh.read())
    except (OSError, ValueError):
        return None
    marker = _marker(data)
    if marker is None:
        return None
    if (marker.name, marker.package, marker.version) != (pin.name, pin.package, pin.version):
        return None
    return marker


def _marker(data: Any) -> Marker | None:
    """``data`` as a Marker when it has exactly its fields, of their types; else ``None``."""
    if not isinstance(data, dict):
        return None
    names = set(field_names(Marker))
    if set(data) != names:
        return None
    seconds = data["seconds"]
    if not all(isinstance(data[n], str) for n in names - {"seconds"}) or not (
        isinstance(seconds, int | float) and not isinstance(seconds, bool)
    ):
        return None
    return Marker(**{**data, "seconds": float(seconds)})


def write_marker(directory: Path, marker: Marker) -> None:
    import json

    tmp = directory / (MARKER + ".tmp")
    from dataclasses import asdict

    tmp.write_text(json.dumps(asdict(marker), indent=2) + "\n", "utf-8")
    tmp.replace(directory / MARKER)


def locate_in(pin: Pin, root: Path) -> Path | None:
    """The pinned binary under ``root`` when that install looks complete, else ``None``."""
    from pathlib import Path

    found = locate_path(pin, os.fspath(root))
    return None if found is None else Path(found)


def locate_path(pin: Pin, root: str) -> str | None:
    """:func:`locate_in` as a string, without ``pathlib``."""
    directory = _install_path(pin, root)
    if read_marker(pin, directory) is None and installed_version(pin, directory) != pin.version:
        return None
    return _find_binary(pin, directory)


def which(name: str) -> Path | None:
    """``name`` on ``PATH`` (an executable file), like ``shutil.which`` on POSIX — whose module
    imports zlib, bz2 and lzma, a cost every ``corral launch`` would pay."""
    from pathlib import Path

    if sys.platform == "win32":
        import shutil

        found = shutil.which(name)
        return Path(found) if found else None
    if os.sep in name:
        candidates = [name]
    else:
        path = os.environ.get("PATH", os.defpath)
        candidates = [os.path.join(d or os.curdir, name) for d in path.split(os.pathsep)]
    for candidate in candidates:
        if os.access(candidate, os.X_OK) and not os.path.isdir(candidate):
            return Path(candidate)
    return None
