"""Finding an agent's own processes in ``/proc``: who is driving a project directory right now.

Seed 003's one-writer rule needs to know whether a person's terminal runs the agent's CLI on a
project (``is_cwd_externally_owned``). :func:`agent_processes` walks ``/proc`` for processes whose
program is one of the agent's binary names and whose working directory is the project. A
Node-launched CLI (``node …/qwen``, ``node …/codex.js``) or a Python one (``python …/hermes``)
counts by its script's name. Processes this corral started (its descendants) are never counted:
they are corral writing, not a terminal.

:func:`names_other_session` reads the session flags of a command line, so a terminal that
explicitly resumes *another* session in the same directory does not hold this one. A terminal that
names no session (a fresh ``claude`` in the directory) is assumed to hold it: the safe side of the
rule is to pause, never to write twice.

Reads are best effort: a process that ends mid-scan, or whose ``/proc`` entries cannot be read
(another user's), is skipped. Elsewhere than Linux nothing is found.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass

from ._lifecycle import descendants

_PROC = "/proc"
_LAUNCHERS = ("node", "nodejs", "bun", "deno", "python", "python3")
_SUFFIXES = (".js", ".mjs", ".cjs", ".exe", ".py")


@dataclass(frozen=True)
class AgentProcess:
    pid: int
    argv: tuple[str, ...]
    cwd: str | None


def program_name(argv: Sequence[str]) -> str | None:
    """The program a command line runs: the script's name under a launcher (``node x/qwen``)."""
    if not argv:
        return None
    name = _stem(argv[0])
    if any(name == launcher or name.startswith(launcher + ".") for launcher in _LAUNCHERS):
        script = next((a for a in argv[1:] if not a.startswith("-")), None)
        return _stem(script) if script else name
    return name


def _stem(path: str) -> str:
    base = os.path.basename(path)
    for suffix in _SUFFIXES:
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base


def _read_argv(pid: int) -> tuple[str, ...] | None:
    try:
        with open(f"{_PROC}/{pid}/cmdline", "rb") as fh:
            raw = fh.read(65536)
    except OSError:
        return None
    parts = raw.split(b"\0")
    if parts and parts[-1] == b"":
        parts.pop()
    return tuple(p.decode("utf-8", "replace") for p in parts)


def _read_cwd(pid: int) -> str | None:
    try:
        return os.readlink(f"{_PROC}/{pid}/cwd")
    except OSError:
        return None


def _pids() -> Iterator[int]:
    with contextlib.suppress(OSError):
        for entry in os.listdir(_PROC):
            if entry.isdigit():
                yield int(entry)


def agent_processes(
    names: Collection[str], *, cwd: str | None = None, exclude_ours: bool = True
) -> list[AgentProcess]:
    """Running processes whose program is one of ``names`` (and whose cwd is ``cwd``, when given).

    With ``exclude_ours`` (the default) this process and its descendants are left out."""
    wanted = set(names)
    if not wanted:
        return []
    ours: set[int] = set()
    if exclude_ours:
        ours = {os.getpid(), *(pid for pid, _ in descendants(os.getpid()))}
    target = os.path.realpath(cwd) if cwd is not None else None
    found: list[AgentProcess] = []
    for pid in _pids():
        if pid in ours:
            continue
        argv = _read_argv(pid)
        if not argv or program_name(argv) not in wanted:
            continue
        where = _read_cwd(pid)
        if target is not None and (where is None or os.path.realpath(where) != target):
            continue
        found.append(AgentProcess(pid=pid, argv=argv, cwd=where))
    return found


def lock_held(path: str | os.PathLike[str]) -> bool:
    """Whether another process holds a lock on the file at ``path`` (``flock`` or POSIX record
    lock, probed shared and non-blocking; a missing file is not held)."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        for probe in (fcntl.flock, fcntl.lockf):
            try:
                probe(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            except OSError:
                continue
        return False
    finally:
        os.close(fd)  # drops the probe's own locks


def session_arguments(argv: Sequence[str], flags: Collection[str]) -> list[str]:
    """The values given to any of ``flags`` (``--resume X``, ``--resume=X``, ``-r X``)."""
    values: list[str] = []
    for i, arg in enumerate(argv):
        for flag in flags:
            if arg == flag and i + 1 < len(argv) and not argv[i + 1].startswith("-"):
                values.append(argv[i + 1])
            elif arg.startswith(flag + "="):
                values.append(arg[len(flag) + 1 :])
    return values


def names_other_session(argv: Sequence[str], sid: str, flags: Collection[str]) -> bool:
    """Whether ``argv`` explicitly names a session, and none of the names is ``sid``."""
    named = session_arguments(argv, flags)
    return bool(named) and not any(
        value == sid or sid in value or sid.startswith(value) for value in named
    )


__all__ = [
    "AgentProcess",
    "agent_processes",
    "lock_held",
    "names_other_session",
    "program_name",
    "session_arguments",
]
