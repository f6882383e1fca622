"""The pinned agent CLIs, read from ``pins.toml`` (the one file that pins them)."""

from __future__ import annotations

import platform
import sys
import tomllib
from functools import cache
from importlib import resources
from typing import Literal

import msgspec

from ..errors import ConfigError

Registry = Literal["npm", "pypi"]
"""Where a pinned CLI comes from: ``npm`` (an npm prefix dir) or ``pypi`` (a virtualenv)."""


class Pin(msgspec.Struct, frozen=True, kw_only=True):
    """One pinned agent CLI."""

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


def platform_tag() -> str:
    """npm's platform-package suffix for this machine, e.g. ``linux-x64`` or ``darwin-arm64``."""
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        machine, machine
    )
    system = {"win32": "windows"}.get(sys.platform, sys.platform)
    return f"{system}-{arch}"


def parse_pins(text: str) -> tuple[Pin, ...]:
    """Parse pins.toml text; raises ``ConfigError`` naming the agent whose entry is bad."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"pins.toml is not valid TOML: {exc}") from exc
    pins = []
    for name, entry in data.get("agents", {}).items():
        try:
            pin = msgspec.convert({"name": name, **entry}, Pin)
        except msgspec.ValidationError as exc:
            raise ConfigError(f"pins.toml: agent {name!r}: {exc}") from exc
        if not pin.bins:
            raise ConfigError(f"pins.toml: agent {name!r} lists no bins")
        pins.append(pin)
    return tuple(pins)


@cache
def _packaged_pins() -> tuple[Pin, ...]:
    return parse_pins(resources.files(__package__).joinpath("pins.toml").read_text("utf-8"))


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
