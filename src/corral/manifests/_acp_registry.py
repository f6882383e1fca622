"""From an entry of the public ACP registry (its ``agent.json``) to a corral manifest: pure data.

An entry names an agent (``id``, ``name``, ``version``, ``description``) and how it is distributed:
``npx`` (an npm package and the arguments that start its ACP mode), ``uvx`` (a PyPI package) or
``binary`` (per-platform archives with a command inside). corral never runs ``npx``/``uvx`` (they
would reach a package registry at every start) and never downloads archives: the manifest names the
agent's executable, and the package (when there is one) goes into ``install`` so ``corral agents
install`` can provide it.

:func:`convert` returns an :class:`AcpEntry`: the manifest (camelCase JSON, validated by the
caller's registry like any custom manifest), the package, and what of the entry was not carried
over. Executables: the ``binary`` command's file name; for a package, ``bins`` when the caller
knows them (corral's pin of that package), else the package's last name segment.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import ConfigError

DEFAULT_PREFIX = "acp."
"""Imported ids are ``acp.<entry id>``, so they never collide with a built-in id (``gemini``)."""

_PLATFORMS = {"darwin": "macos", "linux": "linux", "windows": "windows"}
_VERSION_SUFFIX = re.compile(r"^(@?[^@]+)@([^@]+)$")


@dataclass(frozen=True)
class Package:
    registry: Literal["npm", "pypi"]
    name: str
    version: str | None


@dataclass(frozen=True)
class AcpEntry:
    entry_id: str
    version: str
    manifest: dict[str, Any]
    package: Package | None
    notes: list[str] = field(default_factory=list)
    """What was not carried over (``env`` of a binary distribution, archive URLs)."""


def _text(entry: Mapping[str, Any], key: str, *, required: bool = True) -> str:
    value = entry.get(key)
    if isinstance(value, str) and value.strip():
        return value.strip()
    if required:
        raise ConfigError(f"ACP registry entry: {key!r} must be a non-empty string")
    return ""


def _args(spec: Mapping[str, Any], where: str) -> list[str]:
    args = spec.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError(f"ACP registry entry: {where}.args must be a list of strings")
    return list(args)


def split_package(spec: str) -> tuple[str, str | None]:
    """``@scope/pkg@1.2.3`` → (``@scope/pkg``, ``1.2.3``); ``pkg==1.2`` → (``pkg``, ``1.2``)."""
    if "==" in spec:
        name, _, version = spec.partition("==")
        return name.strip(), version.strip() or None
    found = _VERSION_SUFFIX.match(spec)
    if found:
        return found.group(1), found.group(2)
    return spec, None


def _bin_guess(package: str) -> str:
    name = package.rsplit("/", 1)[-1]
    return re.split(r"[\[=<>]", name, maxsplit=1)[0]


def convert(
    entry: Mapping[str, Any],
    *,
    prefix: str = DEFAULT_PREFIX,
    bins_for: Mapping[str, Sequence[str]] | None = None,
) -> AcpEntry:
    """The manifest for one registry entry; ``bins_for`` maps a package name to its executables."""
    if not isinstance(entry, Mapping):
        raise ConfigError("ACP registry entry: not a JSON object")
    entry_id = _text(entry, "id")
    name = _text(entry, "name")
    version = _text(entry, "version", required=False)
    dist = entry.get("distribution")
    if not isinstance(dist, Mapping) or not dist:
        raise ConfigError(
            f"ACP registry entry {entry_id}: 'distribution' must be a non-empty object"
        )
    bins_for = bins_for or {}
    notes: list[str] = []
    package: Package | None = None
    platforms = ["linux", "macos", "windows"]
    install: dict[str, str] | None = None
    if isinstance(dist.get("npx"), Mapping) or isinstance(dist.get("uvx"), Mapping):
        kind = "npx" if isinstance(dist.get("npx"), Mapping) else "uvx"
        spec = dist[kind]
        pkg_name, pkg_version = split_package(_text(spec, "package"))
        registry: Literal["npm", "pypi"] = "npm" if kind == "npx" else "pypi"
        package = Package(registry=registry, name=pkg_name, version=pkg_version)
        executables = list(bins_for.get(pkg_name) or [_bin_guess(pkg_name)])
        args = _args(spec, f"distribution.{kind}")
        install = {"npm": pkg_name} if registry == "npm" else {"pip": pkg_name}
        hint = (
            f"npm install -g {pkg_name}@{pkg_version or 'latest'}"
            if registry == "npm"
            else f"pip install {pkg_name}{'==' + pkg_version if pkg_version else ''}"
        )
        if isinstance(spec.get("env"), Mapping) and spec["env"]:
            notes.append(f"distribution.{kind}.env not carried over: {sorted(spec['env'])}")
    elif isinstance(dist.get("binary"), Mapping):
        targets = dist["binary"]
        commands: list[tuple[str, list[str]]] = []
        dropped: set[str] = set()
        platforms = []
        for target, spec in targets.items():
            if not isinstance(spec, Mapping):
                raise ConfigError(
                    f"ACP registry entry {entry_id}: binary.{target} is not an object"
                )
            os_name = str(target).split("-", 1)[0]
            if os_name in _PLATFORMS and _PLATFORMS[os_name] not in platforms:
                platforms.append(_PLATFORMS[os_name])
            cmd = posixpath.basename(_text(spec, "cmd").replace("\\", "/"))
            commands.append((cmd.removesuffix(".exe"), _args(spec, f"binary.{target}")))
            if isinstance(spec.get("env"), Mapping):
                dropped.update(map(str, spec["env"]))
        if dropped:
            notes.append(f"binary env not carried over: {', '.join(sorted(dropped))}")
        if not commands or not platforms:
            raise ConfigError(f"ACP registry entry {entry_id}: no usable binary target")
        executables = [commands[0][0]]
        args = commands[0][1]
        hint = f"Download the {name} {version} release archive for your platform"
        notes.append("binary archives are not downloaded: the command must be on PATH or pinned")
    else:
        raise ConfigError(
            f"ACP registry entry {entry_id}: no npx, uvx or binary distribution "
            f"(has: {', '.join(sorted(map(str, dist)))})"
        )
    launch = shlex.join([executables[0], *args])
    manifest: dict[str, Any] = {
        "id": f"{prefix}{entry_id}",
        "displayName": name,
        "executables": executables,
        "launchCommand": executables[0],
        "supportedPlatforms": platforms,
        "supportedApprovalPolicies": ["default"],
        "promptInjection": "paste_then_enter",
        "setupHint": hint,
        "supportsStructured": True,
        "presentation": {
            "acpRegistry": {
                "id": entry_id,
                "version": version,
                "description": _text(entry, "description", required=False),
            }
        },
        "streaming": {
            "preferred": {
                "launchCommand": launch,
                "promptDelivery": "json-rpc",
                "protocol": "acp",
                "sessionMode": "persistent-session",
                "supportsFollowUp": True,
            }
        },
    }
    if install is not None:
        manifest["install"] = install
    return AcpEntry(
        entry_id=entry_id, version=version, manifest=manifest, package=package, notes=notes
    )
