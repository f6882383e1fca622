"""The pinned agent CLIs, read from ``pins.toml`` (the one file that pins them).

``locate`` runs before every ``corral launch``, and ``tomllib`` (with ``datetime``, ``string``)
is a visible share of that start-up: ``_pins_data.py`` holds pins.toml already parsed, with the
very text it was parsed from. When pins.toml still has that text the parsed copy is used; when it
was edited since, pins.toml is parsed again, so an edit always wins. ``scripts/gen_pins_data.py``
regenerates the copy; a unit test checks it is current.
"""

from __future__ import annotations

import os
import sys

from .._record import dataclass
from ..errors import ConfigError

TYPE_CHECKING = False  # ``typing`` itself costs corral launch's start-up (decision 036)
if TYPE_CHECKING:
    from typing import Any, Literal

    Registry = Literal["npm", "pypi"]
    """Where a pinned CLI comes from: ``npm`` (an npm prefix dir) or ``pypi`` (a virtualenv)."""


@dataclass(frozen=True, kw_only=True)
class Pin:
    """One pinned agent CLI. (A plain dataclass, checked by :func:`parse_pins`: ``locate`` runs
    before every ``corral launch`` and must not pay for msgspec.)"""

    name: str
    registry: Registry
    package: str
    version: str
    bins: tuple[str, ...]
    extras: tuple[str, ...] = ()
    fallback: tuple[str, ...] = ()

    @property
    def bin(self) -> str:
        """The agent's own executable name (the first of ``bins``)."""
        return self.bins[0]

    @property
    def spec(self) -> str:
        """The install spec handed to npm or pip."""
        if self.registry == "npm":
            return f"{self.package}@{self.version}"
        extras = f"[{','.join(self.extras)}]" if self.extras else ""
        return f"{self.package}{extras}=={self.version}"


def _machine() -> str:
    if hasattr(os, "uname"):
        return os.uname().machine  # what ``platform.machine()`` reads; ``platform`` costs start-up
    import platform

    return platform.machine()


def platform_tag() -> str:
    """npm's platform-package suffix for this machine, e.g. ``linux-x64`` or ``darwin-arm64``."""
    machine = _machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        machine, machine
    )
    system = {"win32": "windows"}.get(sys.platform, sys.platform)
    return f"{system}-{arch}"


def parse_pins(text: str) -> tuple[Pin, ...]:
    """Parse pins.toml text; raises ``ConfigError`` naming the agent whose entry is bad."""
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"pins.toml is not valid TOML: {exc}") from exc
    return pins_from(data.get("agents", {}))


def pins_from(agents: Any) -> tuple[Pin, ...]:
    """The pins of pins.toml's parsed ``[agents]`` table, checked."""
    pins = []
    if not isinstance(agents, dict):
        raise ConfigError("pins.toml: [agents] must be a table")
    for name, entry in agents.items():
        problem = _entry_problem(entry)
        if problem is not None:
            raise ConfigError(f"pins.toml: agent {name!r}: {problem}")
        pin = Pin(
            name=name,
            registry=entry["registry"],
            package=entry["package"],
            version=entry["version"],
            bins=tuple(entry["bins"]),
            extras=tuple(entry.get("extras", ())),
            fallback=tuple(entry.get("fallback", ())),
        )
        if not pin.bins:
            raise ConfigError(f"pins.toml: agent {name!r} lists no bins")
        pins.append(pin)
    return tuple(pins)


_STRINGS = ("package", "version")
_LISTS = ("bins", "extras", "fallback")


def _entry_problem(entry: Any) -> str | None:
    """What is wrong with one ``[agents.X]`` table, or ``None``."""
    if not isinstance(entry, dict):
        return "expected a table"
    unknown = sorted(set(entry) - {"registry", *_STRINGS, *_LISTS})
    if unknown:
        return f"unknown field {unknown[0]!r}"
    if entry.get("registry") not in ("npm", "pypi"):
        return f"registry must be 'npm' or 'pypi', got {entry.get('registry')!r}"
    for key in _STRINGS:
        if not isinstance(entry.get(key), str):
            return f"{key} must be a string" if key in entry else f"missing required field {key!r}"
    if "bins" not in entry:
        return "missing required field 'bins'"
    for key in _LISTS:
        value = entry.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return f"{key} must be a list of strings"
    return None


PINS_FILE = os.path.join(os.path.dirname(__file__), "pins.toml")
"""next to this module (importlib.resources would load zipfile on every launch; a string:
``pathlib`` is not imported before ``corral run``'s early spawn, decision 056)"""


_packaged: list[tuple[Pin, ...]] = []
"""the packaged pins once read (not ``functools.cache``: ``functools`` loads ``collections``
before ``corral run``'s early spawn, decision 057)"""


def _packaged_pins() -> tuple[Pin, ...]:
    if not _packaged:
        _packaged.append(_read_packaged_pins())
    return _packaged[0]


def forget_packaged_pins() -> None:
    """Read pins.toml again at the next look-up (after it was edited)."""
    _packaged.clear()


def _read_packaged_pins() -> tuple[Pin, ...]:
    with open(PINS_FILE, encoding="utf-8") as fh:
        text = fh.read()
    from . import _pins_data

    if text == _pins_data.SOURCE:
        return pins_from(_pins_data.AGENTS)
    return parse_pins(text)  # edited since the copy was generated


def pinned() -> list[Pin]:
    """Every pinned agent CLI, in the order of pins.toml."""
    return list(_packaged_pins())


def get_pin(name: str) -> Pin:
    """The pin for ``name``; raises ``ConfigError`` listing the known names otherwise."""
    for pin in _packaged_pins():
        if pin.name == name:
            return pin
    known = ", ".join(p.name for p in _packaged_pins())
    raise ConfigError(f"no pinned agent named {name!r} (known: {known})")
