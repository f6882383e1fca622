"""Install pinned agent CLIs: npm into a prefix dir, PyPI into a virtualenv.

One install per agent and version, in ``<root>/<name>/<version>/`` (see ``_layout``). The
marker file is written last, after ``<bin> --version`` printed the pinned version, so a crash
at any earlier point leaves no marker and the next run redoes the install from scratch.
An install dir without a marker whose package metadata already shows the pinned version
(laid out by hand, or by an older corral) is verified and adopted instead of reinstalled.
Library code: progress goes to a callback, never to the terminal.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import msgspec

from ..errors import InstallError
from ._layout import (
    Marker,
    agents_root,
    find_binary,
    install_dir,
    installed_version,
    read_marker,
    write_marker,
)
from ._pins import Pin, get_pin, pinned

InstallState = Literal["installing", "already-installed", "done", "failed"]
"""installing: started · already-installed: nothing to do · done: installed now · failed."""

INSTALL_TIMEOUT = 900.0
VERSION_TIMEOUT = 60.0
_LOG_TAIL_LINES = 30


class InstallEvent(msgspec.Struct, frozen=True, kw_only=True):
    """One progress report: ``state`` of agent ``name``; ``seconds`` once finished."""

    name: str
    version: str
    state: InstallState
    seconds: float | None = None
    path: str | None = None
    message: str = ""


class InstallResult(msgspec.Struct, frozen=True, kw_only=True):
    """The outcome for one agent."""

    name: str
    version: str
    state: InstallState
    path: str | None
    seconds: float
    error: str | None = None
    log_tail: str = ""


Progress = Callable[[InstallEvent], None]


def _noop(_event: InstallEvent) -> None:
    return None


def _tail(text: str) -> str:
    return "\n".join(text.strip().splitlines()[-_LOG_TAIL_LINES:])


def _version_matches(version: str, output: str) -> bool:
    # A sentence's full stop may follow ("GitHub Copilot CLI 1.0.102."), a longer version not.
    return re.search(rf"(?<![\w.]){re.escape(version)}(?!\w|\.\w)", output) is not None


def verify(pin: Pin, binary: Path) -> str:
    """Run ``<binary> --version`` in a throwaway HOME; return its output or raise ``InstallError``."""
    with tempfile.TemporaryDirectory(prefix="corral-verify-") as home:
        env = {**os.environ, "HOME": home, "NO_COLOR": "1", "CI": "true"}
        try:
            done = subprocess.run(
                [str(binary), "--version"],
                capture_output=True,
                text=True,
                stdin=subprocess.DEVNULL,
                timeout=VERSION_TIMEOUT,
                env=env,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise InstallError(pin.name, f"{binary} --version did not run: {exc}") from exc
    output = (done.stdout + done.stderr).strip()
    if done.returncode != 0 or not _version_matches(pin.version, output):
        raise InstallError(
            pin.name,
            f"{binary} --version exited {done.returncode} without printing {pin.version}",
            _tail(output),
        )
    return output


def _run_logged(pin: Pin, argv: Sequence[str], log: Path, cwd: Path) -> None:
    with log.open("a", encoding="utf-8") as fh:
        fh.write(f"$ {' '.join(argv)}\n")
        fh.flush()
        try:
            done = subprocess.run(
                list(argv),
                stdout=fh,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=cwd,
                timeout=INSTALL_TIMEOUT,
                check=False,
            )
        except FileNotFoundError as exc:
            raise InstallError(pin.name, f"{argv[0]} is not installed") from exc
        except subprocess.TimeoutExpired as exc:
            raise InstallError(
                pin.name, f"timed out after {INSTALL_TIMEOUT:.0f}s", _tail(log.read_text())
            ) from exc
    if done.returncode != 0:
        raise InstallError(
            pin.name, f"{argv[0]} exited {done.returncode}", _tail(log.read_text("utf-8"))
        )


def _install_fresh(pin: Pin, directory: Path) -> None:
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    log = directory / "install.log"
    if pin.registry == "npm":
        npm = shutil.which("npm")
        if npm is None:
            raise InstallError(pin.name, "npm is not on PATH (install Node.js 20+)")
        argv = [npm, "install", "--no-fund", "--no-audit", "--prefix", str(directory), pin.spec]
        _run_logged(pin, argv, log, directory)
        return
    _run_logged(pin, [sys.executable, "-m", "venv", str(directory / "venv")], log, directory)
    python = (
        directory / "venv" / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    )
    argv = [str(python), "-m", "pip", "install", "--disable-pip-version-check", pin.spec]
    _run_logged(pin, argv, log, directory)


def install_one(pin: Pin, root: Path, progress: Progress = _noop) -> InstallResult:
    """Install one pin under ``root`` unless already there; report progress; never raises."""
    return _install_one(pin, root, progress)[0]


@contextmanager
def _locked(pin: Pin, root: Path) -> Iterator[None]:
    """Serialise installs of one agent version across processes (POSIX; no-op elsewhere)."""
    lock_dir = root / pin.name
    lock_dir.mkdir(parents=True, exist_ok=True)
    with (lock_dir / f".{pin.version}.lock").open("a") as fh:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            yield
            return
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _install_one(
    pin: Pin, root: Path, progress: Progress
) -> tuple[InstallResult, InstallError | None]:
    with _locked(pin, root):
        return _install_one_locked(pin, root, progress)


def _install_one_locked(
    pin: Pin, root: Path, progress: Progress
) -> tuple[InstallResult, InstallError | None]:
    directory = install_dir(pin, root)
    started = time.monotonic()

    def finish(
        state: InstallState, path: Path | None, error: InstallError | None = None
    ) -> tuple[InstallResult, InstallError | None]:
        seconds = round(time.monotonic() - started, 2)
        shown = str(path) if path else None
        message = str(error) if error else ""
        progress(
            InstallEvent(
                name=pin.name,
                version=pin.version,
                state=state,
                seconds=seconds,
                path=shown,
                message=message,
            )
        )
        result = InstallResult(
            name=pin.name,
            version=pin.version,
            state=state,
            path=shown,
            seconds=seconds,
            error=message or None,
            log_tail=error.log_tail if error else "",
        )
        return result, error

    binary = find_binary(pin, directory)
    if binary is not None and read_marker(pin, directory) is not None:
        return finish("already-installed", binary)
    try:
        if binary is not None and installed_version(pin, directory) == pin.version:
            output = verify(pin, binary)  # adopt a complete install that has no marker
            state: InstallState = "already-installed"
        else:
            progress(InstallEvent(name=pin.name, version=pin.version, state="installing"))
            _install_fresh(pin, directory)
            binary = find_binary(pin, directory)
            if binary is None:
                raise InstallError(
                    pin.name,
                    f"no runnable {pin.bin} after install",
                    _tail((directory / "install.log").read_text("utf-8")),
                )
            output = verify(pin, binary)
            state = "done"
    except InstallError as exc:
        return finish("failed", None, exc)
    write_marker(
        directory,
        Marker(
            name=pin.name,
            package=pin.package,
            version=pin.version,
            binary=str(binary),
            version_output=output[:500],
            installed_at=datetime.now(UTC).isoformat(),
            seconds=round(time.monotonic() - started, 2),
        ),
    )
    return finish(state, binary)


def install(
    names: Sequence[str] | None = None,
    prefix: Path | str | None = None,
    progress: Progress = _noop,
    jobs: int = 2,
    check: bool = True,
) -> list[InstallResult]:
    """Install the named pinned CLIs (all when ``names`` is empty), ``jobs`` at a time.

    Every agent is attempted. Afterwards, with ``check`` (the default), the first failure is
    raised as ``InstallError`` (with the log tail); without it, failures are only results.
    """
    pins = [get_pin(n) for n in names] if names else pinned()
    root = agents_root(prefix)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        outcomes = list(pool.map(lambda p: _install_one(p, root, progress), pins))
    for _result, error in outcomes:
        if check and error is not None:
            raise error
    return [result for result, _error in outcomes]
