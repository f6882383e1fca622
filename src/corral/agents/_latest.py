"""Each pinned CLI's newest release: ask its registry, install it beside (never over) the pins.

Layout::

    <latest root>/<name>/<version>/      $CORRAL_LATEST_DIR or cache_dir()/latest (same shape as
                                         the pinned installs, see ``_layout``)
    <latest root>/latest.json            per agent: the newest version found, when, and where
                                         its binary is (what ``corral conformance --latest`` runs)

The registry is asked through its ordinary client (``npm view``, ``pip index versions`` with
pip's configured index), so wherever npm and pip are set up to look is where corral looks.
A newest release that *is* the pin reuses the verified pinned install instead of a second copy.
Nothing here edits ``pins.toml`` or the pinned install root (moving a pin is ``_pin_edit``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from .._paths import cache_dir
from ..errors import InstallError
from ._install import InstallEvent, Progress, install_one
from ._layout import agents_root, locate_in
from ._pins import Pin, get_pin, pinned

LOOKUP_TIMEOUT = 120.0
INDEX_FILE = "latest.json"

Runner = Callable[[Sequence[str]], tuple[int, str]]
"""Runs argv, returns (exit code, stdout + stderr); replaced in tests."""


class LatestResult(msgspec.Struct, frozen=True, kw_only=True):
    """One agent's newest release and how installing it went."""

    name: str
    package: str
    pinned: str
    latest: str | None
    """The newest version the registry offers (``None``: the look-up failed)."""
    state: str
    """``same-as-pin`` (reuses the pinned install) · ``already-installed`` · ``done`` · ``failed``."""
    path: str | None = None
    seconds: float = 0.0
    error: str | None = None
    log_tail: str = ""


class IndexEntry(msgspec.Struct, frozen=True, kw_only=True):
    version: str | None
    checked_at: str
    path: str | None = None
    error: str | None = None
    log_tail: str = ""
    """The installer's last lines when it failed (npm's "complete log" pointers left out)."""


def latest_root(prefix: Path | str | None = None) -> Path:
    """Root of the newest-release installs: ``prefix``, ``$CORRAL_LATEST_DIR`` or the cache dir."""
    if prefix is not None:
        return Path(prefix)
    env = os.environ.get("CORRAL_LATEST_DIR")
    return Path(env) if env else cache_dir() / "latest"


def _run(argv: Sequence[str]) -> tuple[int, str]:
    try:
        done = subprocess.run(
            list(argv),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=LOOKUP_TIMEOUT,
            check=False,
        )
    except FileNotFoundError:
        return 127, f"{argv[0]} is not installed"
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 124, f"{argv[0]} did not answer: {exc}"
    return done.returncode, done.stdout + ("\n" + done.stderr if done.stderr else "")


_VERSION = re.compile(r"^\d+(\.\d+)*([-+.][0-9A-Za-z.-]+)?$")


def parse_npm_version(text: str) -> str:
    """The version in ``npm view PKG version --json`` output (a JSON string, or a list of them:
    the last is the newest); raises ``ValueError`` for anything else."""
    try:
        data = json.loads(text)
    except ValueError:
        raise ValueError(f"npm printed no JSON: {text.strip()[:200]!r}") from None
    if isinstance(data, list) and data:
        data = data[-1]
    if isinstance(data, dict) and "error" in data:
        error = data["error"]
        summary = error.get("summary") if isinstance(error, dict) else error
        raise ValueError(f"npm: {summary}")
    if not isinstance(data, str) or not _VERSION.match(data):
        raise ValueError(f"npm printed no version: {text.strip()[:200]!r}")
    return data


def parse_pip_index(text: str, package: str) -> str:
    """The newest version in ``pip index versions PKG`` output (its ``PKG (X.Y.Z)`` line)."""
    wanted = re.sub(r"[-_.]+", "-", package).lower()
    for line in text.splitlines():
        match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*) \(([^)\s]+)\)\s*$", line.strip())
        if match and re.sub(r"[-_.]+", "-", match.group(1)).lower() == wanted:
            version = match.group(2)
            if _VERSION.match(version):
                return version
    raise ValueError(f"pip listed no version of {package}: {text.strip()[-200:]!r}")


def lookup_argv(pin: Pin) -> list[str]:
    """The registry client command that answers ``pin``'s newest version."""
    if pin.registry == "npm":
        return [shutil.which("npm") or "npm", "view", pin.package, "version", "--json"]
    return [
        sys.executable,
        "-m",
        "pip",
        "index",
        "versions",
        pin.package,
        "--disable-pip-version-check",
    ]


def lookup_latest(pin: Pin, run: Runner | None = None) -> str:
    """The newest release of ``pin``'s package; raises ``InstallError`` naming the agent."""
    argv = lookup_argv(pin)
    code, output = (run or _run)(argv)
    if code != 0:
        tail = "\n".join(output.strip().splitlines()[-10:])
        raise InstallError(pin.name, f"{' '.join(argv[-5:])} exited {code}", tail)
    try:
        if pin.registry == "npm":
            return parse_npm_version(output)
        return parse_pip_index(output, pin.package)
    except ValueError as exc:
        raise InstallError(pin.name, str(exc)) from exc


def read_index(prefix: Path | str | None = None) -> dict[str, IndexEntry]:
    """What the last ``install --latest`` found per agent; a missing or bad file is nothing."""
    try:
        raw = (latest_root(prefix) / INDEX_FILE).read_bytes()
        return msgspec.json.decode(raw, type=dict[str, IndexEntry])
    except (OSError, msgspec.MsgspecError):
        return {}


def _short_tail(text: str, lines: int = 6) -> str:
    kept = [line for line in text.splitlines() if "complete log of this run" not in line]
    return "\n".join(kept[-lines:])


def _write_index(root: Path, results: Sequence[LatestResult]) -> None:
    index = read_index(root)
    now = datetime.now(UTC).isoformat(timespec="seconds")
    for r in results:
        index[r.name] = IndexEntry(
            version=r.latest,
            checked_at=now,
            path=r.path,
            error=r.error,
            log_tail=_short_tail(r.log_tail),
        )
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / (INDEX_FILE + ".tmp")
    tmp.write_bytes(msgspec.json.format(msgspec.json.encode(dict(sorted(index.items())))))
    tmp.replace(root / INDEX_FILE)


def latest_version(name: str, prefix: Path | str | None = None) -> str | None:
    """The newest version the last ``install --latest`` found for ``name`` (``None``: unknown)."""
    entry = read_index(prefix).get(name)
    return entry.version if entry else None


def locate_latest(
    name: str, prefix: Path | str | None = None, pinned_prefix: Path | str | None = None
) -> Path | None:
    """The installed newest release of agent ``name``, or ``None`` (not installed, or failed)."""
    pin = get_pin(name)
    version = latest_version(name, prefix)
    if version is None:
        return None
    if version == pin.version:
        found = locate_in(pin, agents_root(pinned_prefix))
        if found is not None:
            return found
    return locate_in(replace(pin, version=version), latest_root(prefix))


@dataclass(frozen=True)
class _Base:
    name: str
    package: str
    pinned: str

    def result(self, **fields: Any) -> LatestResult:
        return LatestResult(name=self.name, package=self.package, pinned=self.pinned, **fields)


def _install_latest_one(
    pin: Pin, root: Path, pinned_root: Path, progress: Progress, run: Runner
) -> LatestResult:
    base = _Base(name=pin.name, package=pin.package, pinned=pin.version)
    try:
        version = lookup_latest(pin, run)
    except InstallError as exc:
        progress(
            InstallEvent(name=pin.name, version="?", state="failed", seconds=0.0, message=str(exc))
        )
        return base.result(latest=None, state="failed", error=str(exc))
    if version == pin.version and (found := locate_in(pin, pinned_root)) is not None:
        progress(
            InstallEvent(
                name=pin.name,
                version=version,
                state="already-installed",
                path=str(found),
                message="the newest release is the pin",
            )
        )
        return base.result(latest=version, state="same-as-pin", path=str(found))
    result = install_one(replace(pin, version=version), root, progress)
    return base.result(
        latest=version,
        state=result.state,
        path=result.path,
        seconds=result.seconds,
        error=result.error,
        log_tail=result.log_tail,
    )


def install_latest(
    names: Sequence[str] | None = None,
    prefix: Path | str | None = None,
    progress: Progress | None = None,
    jobs: int = 2,
    *,
    pinned_prefix: Path | str | None = None,
    run: Runner | None = None,
) -> list[LatestResult]:
    """Look up and install the newest release of the named pins (all when empty), ``jobs`` at a
    time, under :func:`latest_root`. Every agent is attempted; failures are results, never raised.
    """
    pins = [get_pin(n) for n in names] if names else pinned()
    root = latest_root(prefix)
    pinned_root = agents_root(pinned_prefix)
    report = progress or (lambda _event: None)
    runner = run or _run
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(
            pool.map(lambda p: _install_latest_one(p, root, pinned_root, report, runner), pins)
        )
    _write_index(root, results)
    return results
