"""Keeping agent processes tied to corral: parent-death signal, process identity, process trees.

* :func:`child_setup` is the ``preexec_fn`` of every agent process: on Linux it asks the kernel to
  SIGKILL the child when the corral thread that started it dies (``PR_SET_PDEATHSIG``), and checks
  the parent did not die before that request landed. Elsewhere it does nothing; the process group
  (``start_new_session``) is still killed on every exit path corral controls.
* :func:`start_time` reads a process's start time (``/proc/<pid>/stat`` field 22, clock ticks since
  boot). A ``(pid, start_time)`` pair names one process for good: a reused pid has another start
  time, so nobody mistakes an unrelated process for an agent or an owner.
* :func:`descendants` walks ``/proc`` for a process's children, grandchildren and so on — also those
  that left its process group (a sandbox that starts a new session), which a group signal misses;
  :func:`kill_tree` ends them by identity.
"""

from __future__ import annotations

import ctypes
import os
import sys

from ._spawn import SIGKILL

# Neither ``typing``, ``contextlib`` nor ``collections`` is loaded before the early spawn
# (decisions 036 and 057): this module is on that path.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

_PR_SET_PDEATHSIG = 1
_libc: ctypes.CDLL | None = None
if sys.platform.startswith("linux"):
    # The process's own symbols hold libc's ``prctl``: no ``find_library``, which runs
    # ``ldconfig -p`` (a process spawn on every start of corral, issue 20).
    try:
        _own = ctypes.CDLL(None, use_errno=True)
        if _own.prctl is not None:  # AttributeError when absent: the fallback below
            _libc = _own
    except (OSError, AttributeError):
        pass
    if _libc is None:
        import ctypes.util  # shutil, with zlib, bz2 and lzma: only when needed

        try:
            _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        except OSError:
            _libc = None

ProcessId = tuple[int, int]
"""``(pid, start_time)``: one process, immune to pid reuse."""


def child_setup() -> None:
    """``preexec_fn`` for agent processes: die with the parent (Linux ``PR_SET_PDEATHSIG``).

    Runs in the forked child before ``exec``; only async-signal-safe work (one ``prctl`` call, one
    ``getppid``). The death signal follows the *thread* that forked, which for corral is the event
    loop's thread: the one whose end means nobody reads the agent any more.
    """
    if _libc is None:
        return
    parent = os.getppid()
    _libc.prctl(_PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before prctl: nobody would ever kill us
        os._exit(1)


def parent_death_supported() -> bool:
    return _libc is not None


def start_time(pid: int) -> int | None:
    """The start time of ``pid`` in clock ticks since boot (``/proc``), or ``None`` if unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may contain spaces or ')'.
    fields = data[data.rfind(b")") + 2 :].split()
    try:
        return int(fields[19])  # field 22 overall; fields[0] is field 3
    except (IndexError, ValueError):
        return None


def identity(pid: int) -> ProcessId | None:
    started = start_time(pid)
    return None if started is None else (pid, started)


def is_alive(ident: ProcessId) -> bool:
    """Whether the very process ``ident`` names still runs (a zombie counts as gone)."""
    pid, started = ident
    if start_time(pid) != started:
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return False
    state = data[data.rfind(b")") + 2 : data.rfind(b")") + 3]
    return state not in (b"Z", b"X")


def _parents() -> dict[int, int]:
    parents: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return parents
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2 :].split()
        try:
            parents[int(entry)] = int(fields[1])
        except (IndexError, ValueError):
            continue
    return parents


def descendants(pid: int) -> list[ProcessId]:
    """Every live descendant of ``pid`` (children first), each with its start time."""
    parents = _parents()
    children: dict[int, list[int]] = {}
    for child, parent in parents.items():
        children.setdefault(parent, []).append(child)
    found: list[ProcessId] = []
    todo = list(children.get(pid, ()))
    seen: set[int] = set()
    while todo:
        current = todo.pop(0)
        if current in seen:
            continue
        seen.add(current)
        ident = identity(current)
        if ident is not None:
            found.append(ident)
        todo.extend(children.get(current, ()))
    return found


def kill_tree(idents: Iterable[ProcessId], sig: int = SIGKILL) -> int:
    """Signal each process that is still the one named (never a reused pid); returns how many."""
    hit = 0
    for ident in idents:
        if not is_alive(ident):
            continue
        try:
            os.kill(ident[0], sig)
        except (ProcessLookupError, PermissionError):
            continue
        hit += 1
    return hit
