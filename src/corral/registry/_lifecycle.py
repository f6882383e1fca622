"""The adapter lifecycle before a session (seed 000): detect → probe → verify → repair.

detect   find the executable (PATH, then the pinned-agents cache) and ask it ``--version``.
probe    cheap liveness: ``<exe> --help`` exits 0 within a timeout.
verify   launch check of the structured mode: the structured ``launchCommand`` is started and must
         still be running after a settle window (persistent modes: stdin, json-rpc, sse); for
         ``argv`` delivery, where a process lives for one turn, ``<launchCommand> --help`` must exit
         0. Adapters without a structured profile verify their shell ``launchCommand`` the same
         way. Run twice (one retry) before declaring failure. It is a launch check, not a protocol
         handshake: speaking the protocol is proven by the drivers' real-CLI conformance tests.
repair   the setup hint turned into a command to show (never run by corral on its own).
"""

from __future__ import annotations

import asyncio
import shlex
import tempfile
import time
from collections.abc import Iterable
from typing import Literal

import msgspec

from ..adapters.base import parse_version
from ..manifests import Manifest, PromptDelivery
from ._resolve import HostPlatform, ResolvedExecutable, resolve_executable_path
from ._run import RunOutcome, run_bounded, run_stays_up


class Detection(msgspec.Struct, frozen=True, kw_only=True):
    """What ``detect`` found for one adapter."""

    adapter_id: str
    status: Literal["installed", "missing"]
    executable: str | None = None
    path: str | None = None
    source: str | None = None
    """``path`` (found on PATH), ``pinned`` (corral's agents cache) or ``explicit``."""
    version: str | None = None
    error: str | None = None
    """Set when the executable exists but ``--version`` failed or timed out."""
    repair: list[str] | None = None
    """For a missing adapter, the command that would install it."""


class CheckResult(msgspec.Struct, frozen=True, kw_only=True):
    """The outcome of ``probe`` or ``verify``."""

    adapter_id: str
    step: Literal["probe", "verify"]
    ok: bool
    detail: str
    argv: list[str] = msgspec.field(default_factory=list)
    attempts: int = 1
    exit_code: int | None = None
    duration_s: float = 0.0
    output_tail: str = ""


def repair_command(manifest: Manifest) -> list[str] | None:
    """The install command from ``install`` (or a command-looking setup hint); ``None`` if unknown."""
    if manifest.install is not None:
        if manifest.install.npm:
            return ["npm", "install", "-g", manifest.install.npm]
        if manifest.install.pip:
            return ["pip", "install", manifest.install.pip]
    hint = manifest.setup_hint.strip()
    for prefix in ("Install with ", "Run "):
        if hint.startswith(prefix):
            hint = hint[len(prefix) :]
    try:
        words = shlex.split(hint)
    except ValueError:
        return None
    if words and words[0] in {"npm", "pip", "pipx", "uv", "brew", "corral"}:
        return words
    return None


def find_executable(
    manifest: Manifest, *, path: str | None = None, platform: HostPlatform | None = None
) -> ResolvedExecutable | None:
    """The first of the manifest's ``executables`` that resolves."""
    for name in manifest.executables:
        found = resolve_executable_path(name, path=path, platform=platform)
        if found is not None:
            return found
    return None


async def detect(
    manifest: Manifest, *, timeout: float = 15.0, path: str | None = None
) -> Detection:
    """Find the adapter's executable and ask it ``--version`` (bounded by ``timeout`` seconds)."""
    found = find_executable(manifest, path=path)
    if found is None:
        return Detection(adapter_id=manifest.id, status="missing", repair=repair_command(manifest))
    outcome = await run_bounded([*found.argv, "--version"], timeout=timeout)
    version = parse_version(outcome.output) if outcome.exit_code == 0 else None
    error = None
    if outcome.error:
        error = outcome.error
    elif outcome.timed_out:
        error = f"--version did not answer within {timeout:g}s"
    elif outcome.exit_code != 0:
        error = f"--version exited {outcome.exit_code}"
    return Detection(
        adapter_id=manifest.id,
        status="installed",
        executable=found.name,
        path=found.path,
        source=found.source,
        version=version,
        error=error,
    )


async def detect_many(
    manifests: Iterable[Manifest],
    *,
    timeout: float = 15.0,
    path: str | None = None,
    concurrency: int = 3,
) -> list[Detection]:
    """Detect several adapters, a few at a time (some CLIs take seconds to print a version)."""
    gate = asyncio.Semaphore(concurrency)

    async def one(m: Manifest) -> Detection:
        async with gate:
            return await detect(m, timeout=timeout, path=path)

    async with asyncio.TaskGroup() as tg:
        tasks = [tg.create_task(one(m)) for m in manifests]
    return [t.result() for t in tasks]


def _missing(manifest: Manifest, step: Literal["probe", "verify"]) -> CheckResult:
    return CheckResult(
        adapter_id=manifest.id,
        step=step,
        ok=False,
        detail=f"none of {', '.join(manifest.executables)} was found",
    )


async def probe(
    manifest: Manifest, *, timeout: float = 20.0, path: str | None = None
) -> CheckResult:
    """Cheap liveness: ``<exe> --help`` must exit 0 within ``timeout`` seconds."""
    found = find_executable(manifest, path=path)
    if found is None:
        return _missing(manifest, "probe")
    argv = [*found.argv, "--help"]
    start = time.monotonic()
    outcome = await run_bounded(argv, timeout=timeout)
    ok = outcome.exit_code == 0
    return CheckResult(
        adapter_id=manifest.id,
        step="probe",
        ok=ok,
        detail="--help exited 0" if ok else _explain(outcome, timeout),
        argv=argv,
        exit_code=outcome.exit_code,
        duration_s=round(time.monotonic() - start, 3),
        output_tail="" if ok else outcome.output,
    )


def _explain(outcome: RunOutcome, timeout: float) -> str:
    if outcome.error:
        return f"could not start: {outcome.error}"
    if outcome.timed_out:
        return f"no exit within {timeout:g}s"
    return f"exited {outcome.exit_code}"


def verify_argv(manifest: Manifest, exe: ResolvedExecutable) -> tuple[list[str], bool]:
    """The argv ``verify`` runs and whether it must stay up (True) or exit 0 (False)."""
    profile = manifest.structured
    command = profile.launch_command if profile is not None else manifest.launch_command
    words = shlex.split(command)
    if words and words[0] in manifest.executables:
        head: tuple[str, ...] = exe.argv
    else:
        other = resolve_executable_path(words[0]) if words else None
        head = other.argv if other is not None else tuple(words[:1])
    argv = [*head, *words[1:]]
    per_turn = profile is None or profile.spec.prompt_delivery is PromptDelivery.ARGV
    return ([*argv, "--help"], False) if per_turn else (argv, True)


async def verify(
    manifest: Manifest,
    *,
    settle: float = 3.0,
    timeout: float = 30.0,
    retries: int = 1,
    path: str | None = None,
) -> CheckResult:
    """Launch check of the structured mode, retried ``retries`` times before failing."""
    found = find_executable(manifest, path=path)
    if found is None:
        return _missing(manifest, "verify")
    argv, stays_up = verify_argv(manifest, found)
    start = time.monotonic()
    attempts = 0
    outcome = RunOutcome(exit_code=None, output="", timed_out=False)
    ok = False
    while attempts <= retries and not ok:
        attempts += 1
        with tempfile.TemporaryDirectory(prefix="corral-verify-") as cwd:
            if stays_up:
                outcome = await run_stays_up(argv, settle=settle, cwd=cwd)
                ok = outcome.timed_out and outcome.error is None
            else:
                outcome = await run_bounded(argv, timeout=timeout, cwd=cwd)
                ok = outcome.exit_code == 0
    if ok:
        detail = f"still running after {settle:g}s" if stays_up else "--help exited 0"
    elif stays_up and not outcome.error:
        detail = f"exited {outcome.exit_code} within {settle:g}s of starting"
    else:
        detail = _explain(outcome, timeout)
    return CheckResult(
        adapter_id=manifest.id,
        step="verify",
        ok=ok,
        detail=detail,
        argv=argv,
        attempts=attempts,
        exit_code=outcome.exit_code,
        duration_s=round(time.monotonic() - start, 3),
        output_tail="" if ok else outcome.output,
    )
