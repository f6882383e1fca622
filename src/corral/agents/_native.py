"""The native executable behind an agent CLI's npm wrapper, and what the wrapper hands it (038).

``@openai/codex`` installs ``bin/codex.js``, a Node script whose whole job is to find the native
``codex`` of the platform package and run it; Node's start-up is ~70 ms of every codex start.
:func:`native_entry` does the same look-up without Node: given the located binary and the
environment it would run with, it returns the native executable and the environment changes the
wrapper makes, or ``None`` — then the wrapper runs as before. It never raises and starts no
process; it reads a few directory entries and the wrapper itself (9 KB).

The contract, read from codex 0.171.0's wrapper:

* the platform package ``@openai/codex-<os>-<arch>`` (linux x64/arm64, darwin x64/arm64), found
  as Node's ``require.resolve`` finds it from the wrapper's real directory (every
  ``node_modules`` on the way up); the executable is ``vendor/<target triple>/bin/codex`` in it;
* the environment: the caller's, with ``CODEX_MANAGED_PACKAGE_ROOT`` = the real path of the
  ``@openai/codex`` package, ``CODEX_MANAGED_BY_{NPM,BUN,PNPM,VITE_PLUS}`` all removed, then the
  one of the package manager it detects set to ``1`` (bun: hints in ``npm_config_user_agent``,
  ``npm_execpath`` or the install path; pnpm: a ``node_modules/.modules.yaml`` owning the package;
  otherwise npm);
* argv: the native path, then the wrapper's own arguments; exit status and signals are the
  native process's (the wrapper ``execve``s where Node can, else it mirrors them).

Only a wrapper whose exact bytes were reviewed is replaced (:data:`REVIEWED`, by size and
CRC-32 — a change detector, not a security check: whoever can edit the wrapper can edit the native
binary too). Anything else falls back to the wrapper: another wrapper text, an unknown platform,
a Vite+ install (not modelled), a platform package Node would find elsewhere (``NODE_PATH``, global
folders), a missing native file. ``tests/realcli/test_codex_native.py`` fails when the pinned
wrapper is not one reviewed here, and ``corral conformance --latest`` runs the newest release
through this same look-up.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # ``typing`` itself costs corral launch's start-up (decision 036)
if TYPE_CHECKING:
    from collections.abc import Mapping

REVIEWED: dict[tuple[int, int], str] = {
    # (size, CRC-32) of @openai/codex's bin/codex.js → the release whose wrapper was read
    (8925, 0xAC54008D): "0.171.0",
}
"""Wrapper texts whose contract is the one in this module's docstring."""

# (sys.platform, Node's process.arch) → (platform package, target triple)
_CODEX_TARGETS = {
    ("linux", "x64"): ("@openai/codex-linux-x64", "x86_64-unknown-linux-musl"),
    ("linux", "arm64"): ("@openai/codex-linux-arm64", "aarch64-unknown-linux-musl"),
    ("android", "x64"): ("@openai/codex-linux-x64", "x86_64-unknown-linux-musl"),
    ("android", "arm64"): ("@openai/codex-linux-arm64", "aarch64-unknown-linux-musl"),
    ("darwin", "x64"): ("@openai/codex-darwin-x64", "x86_64-apple-darwin"),
    ("darwin", "arm64"): ("@openai/codex-darwin-arm64", "aarch64-apple-darwin"),
}
_NODE_ARCH = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}
_MANAGED_BY = {
    "npm": "CODEX_MANAGED_BY_NPM",
    "bun": "CODEX_MANAGED_BY_BUN",
    "pnpm": "CODEX_MANAGED_BY_PNPM",
    "vite-plus": "CODEX_MANAGED_BY_VITE_PLUS",
}


class Native:
    """Run ``command`` instead of the wrapper, with ``env`` added (winning) and ``unset`` removed."""

    __slots__ = ("command", "env", "unset")

    def __init__(self, command: str, env: dict[str, str], unset: tuple[str, ...]) -> None:
        self.command = command
        self.env = env
        self.unset = unset

    def environment(self, base: Mapping[str, str]) -> dict[str, str]:
        """``base`` as the wrapper would hand it to the native executable."""
        return {k: v for k, v in base.items() if k not in self.unset} | self.env

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Native):
            return NotImplemented
        return (self.command, self.env, self.unset) == (other.command, other.env, other.unset)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Native(command={self.command!r}, env={self.env!r}, unset={self.unset!r})"


def _machine() -> str:
    return os.uname().machine if hasattr(os, "uname") else ""


def native_entry(
    binary: str | os.PathLike[str],
    env: Mapping[str, str],
    *,
    reviewed: Mapping[tuple[int, int], str] = REVIEWED,
    system: str | None = None,
    machine: str | None = None,
) -> Native | None:
    """The native executable behind ``binary`` (as located: a path, possibly a symlink) and the
    environment changes its wrapper makes, or ``None`` to run ``binary`` itself."""
    try:
        return _codex(os.fspath(binary), env, reviewed, system or sys.platform, machine)
    except (OSError, ValueError):  # a racing install, an odd path: the wrapper knows what to do
        return None


def _codex(
    binary: str,
    env: Mapping[str, str],
    reviewed: Mapping[tuple[int, int], str],
    system: str,
    machine: str | None,
) -> Native | None:
    if os.sep not in binary:
        return None
    script = os.path.realpath(binary)
    if os.path.basename(script) != "codex.js":
        return None  # never read a native binary: only the wrapper's name is looked at
    size = os.stat(script).st_size
    if not any(known_size == size for known_size, _ in reviewed):
        return None
    import zlib

    with open(script, "rb") as fh:
        if (size, zlib.crc32(fh.read())) not in reviewed:
            return None
    arch = _NODE_ARCH.get((machine or _machine()).lower())
    target = _CODEX_TARGETS.get((system, arch or ""))
    if target is None:
        return None
    package, triple = target
    here = os.path.dirname(script)
    root = os.path.realpath(os.path.join(here, ".."))
    platform_dir = _node_resolve(here, package)
    if platform_dir is None:
        return None
    command = os.path.join(platform_dir, "vendor", triple, "bin", "codex")
    if not (os.path.isfile(command) and os.access(command, os.X_OK)):
        return None
    manager = _package_manager(root, os.path.dirname(os.path.abspath(binary)), here, env)
    if manager is None:
        return None
    chosen = _MANAGED_BY[manager]
    unset = tuple(v for v in _MANAGED_BY.values() if v != chosen)
    return Native(command, {"CODEX_MANAGED_PACKAGE_ROOT": root, chosen: "1"}, unset)


def _node_resolve(start: str, package: str) -> str | None:
    """The directory of ``package`` as Node's ``require.resolve`` finds it from ``start`` through
    the ``node_modules`` directories on the way up; ``None`` where Node would look further."""
    directory = start
    while True:
        if os.path.basename(directory) != "node_modules":
            candidate = os.path.join(directory, "node_modules", package)
            if os.path.isfile(os.path.join(candidate, "package.json")):
                return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _package_manager(
    root: str, entry_dir: str, script_dir: str, env: Mapping[str, str]
) -> str | None:
    """The wrapper's guess of what installed it: ``npm``, ``bun`` or ``pnpm``; ``None`` for a
    Vite+ install (not modelled: the wrapper runs)."""
    for start in dict.fromkeys((root, entry_dir)):
        directory = start
        while os.path.dirname(directory) != directory:
            if os.path.basename(directory) == "packages" and os.path.exists(
                os.path.join(directory, "@openai", "codex.json")
            ):
                return None
            if _pnpm_owns(os.path.join(directory, "node_modules"), root):
                return "pnpm"
            directory = os.path.dirname(directory)
        if _pnpm_owns(os.path.join(directory, "node_modules"), root):
            return "pnpm"
    if _bun_agent(env.get("npm_config_user_agent", "")) or "bun" in env.get("npm_execpath", ""):
        return "bun"
    if ".bun/install/global" in script_dir or ".bun\\install\\global" in script_dir:
        return "bun"
    return "npm"


def _pnpm_owns(node_modules: str, root: str) -> bool:
    if not os.path.exists(os.path.join(node_modules, ".modules.yaml")):
        return False
    try:
        return os.path.realpath(os.path.join(node_modules, "@openai", "codex")) == root
    except OSError:
        return False


def _bun_agent(user_agent: str) -> bool:
    """``/\\bbun\\//`` of JavaScript: ``bun/`` not preceded by an ASCII word character."""
    at = user_agent.find("bun/")
    while at != -1:
        before = user_agent[at - 1] if at > 0 else ""
        if not (before.isascii() and (before.isalnum() or before == "_")):
            return True
        at = user_agent.find("bun/", at + 1)
    return False
