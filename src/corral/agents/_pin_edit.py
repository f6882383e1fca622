"""Moving a pin: rewrite one agent's ``version`` in ``pins.toml``, leaving every other byte alone.

The file is edited as text (comments, order and layout stay as they are), then parsed again: an
edit that would not parse, or would change anything but that one version, is refused.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from ..errors import ConfigError
from ._pins import forget_packaged_pins, parse_pins

_TABLE = re.compile(r"^\[(?P<name>[^\]]+)\]\s*(#.*)?$")
_VERSION_LINE = re.compile(r'^(?P<head>\s*version\s*=\s*)"(?P<value>[^"]*)"(?P<tail>.*)$')
_SAFE_VERSION = re.compile(r"^\d+(\.\d+)*([-+.][0-9A-Za-z.-]+)?$")


def pins_path() -> Path:
    """The ``pins.toml`` corral reads (next to this module)."""
    return Path(__file__).parent / "pins.toml"


def set_version(text: str, name: str, version: str) -> str:
    """``text`` (pins.toml) with agent ``name`` pinned to ``version``; raises ``ConfigError``."""
    if not _SAFE_VERSION.match(version):
        raise ConfigError(f"{version!r} is not a version")
    before = {p.name: p for p in parse_pins(text)}
    if name not in before:
        raise ConfigError(f"no pinned agent named {name!r} (known: {', '.join(before)})")
    lines = text.splitlines(keepends=True)
    inside = False
    done = False
    for i, line in enumerate(lines):
        table = _TABLE.match(line.strip())
        if table:
            inside = table.group("name").strip() == f"agents.{name}"
            continue
        match = _VERSION_LINE.match(line.rstrip("\r\n")) if inside and not done else None
        if match:
            ending = line[len(line.rstrip("\r\n")) :]
            lines[i] = f'{match.group("head")}"{version}"{match.group("tail")}{ending}'
            done = True
    if not done:
        raise ConfigError(f"pins.toml: agent {name!r} has no plain version line to rewrite")
    new = "".join(lines)
    after = {p.name: p for p in parse_pins(new)}
    expected = {**before, name: replace(before[name], version=version)}
    if after != expected:
        raise ConfigError(f"pins.toml: rewriting {name}'s version would change more than it")
    return new


def write_version(name: str, version: str, path: Path | None = None) -> str:
    """Pin ``name`` to ``version`` in ``path`` (default: corral's pins.toml); returns the old
    version. The packaged pins are read again afterwards."""
    target = path or pins_path()
    text = target.read_text("utf-8")
    old = {p.name: p.version for p in parse_pins(text)}.get(name)
    new = set_version(text, name, version)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(new, "utf-8")
    tmp.replace(target)
    if target.resolve() == pins_path().resolve():
        from ._pins_render import write_data

        write_data(target)  # the parsed copy corral launch reads follows the edit
    forget_packaged_pins()
    return old or ""
