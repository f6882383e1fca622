"""Who runs a session: an OS lock held for the owner's whole life, which PID reuse cannot fool.

The corral process that runs a session holds an exclusive ``fcntl.flock`` on one lock file per
session (``<database>.owners/<session id>.lock``) from start to end; the file also records the
owner's pid and process start time, for people. The kernel drops the lock when the owner dies, by
any death (SIGKILL included), so:

* the lock is **held** → a live corral process runs the session (whatever its pid says);
* the lock file exists but is **free** → its owner is gone, even if the pid recorded in the
  database now belongs to an unrelated process; recovery treats the session as abandoned;
* there is **no** lock file (a session recorded by a corral that predates the locks) → the pid is
  all there is, checked with its start time when known; :meth:`SessionManager.take_over
  <corral.sessions.SessionManager.take_over>` is the explicit way out when that check is fooled.
"""

from __future__ import annotations

import contextlib
import enum
import fcntl
import os
from pathlib import Path

from .._process import start_time
from ..errors import SessionError


class LockState(enum.StrEnum):
    OURS = "ours"
    """This manager holds it."""
    HELD = "held"
    """Another live process (or another manager in this one) holds it."""
    FREE = "free"
    """The file is there and nobody holds it: the owner died or stopped."""
    ABSENT = "absent"
    """No lock file: the owner (if any) is only known by its pid."""


class OwnerLocks:
    """The session lock files of one database."""

    def __init__(self, db_path: str | os.PathLike[str]) -> None:
        db = Path(os.fspath(db_path))
        self.dir = db.parent / f".{db.name}.owners"
        self._held: dict[str, int] = {}

    def _path(self, session_id: str) -> Path:
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in session_id)
        return self.dir / f"{safe}.lock"

    def acquire(self, session_id: str) -> None:
        """Hold the session's lock for this process; :class:`SessionError` if someone else does."""
        if session_id in self._held:
            return
        self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self._path(session_id), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SessionError(
                f"session {session_id} is run by another corral process", session_id
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()} {start_time(os.getpid()) or ''}\n".encode())
        self._held[session_id] = fd

    def release(self, session_id: str) -> None:
        fd = self._held.pop(session_id, None)
        if fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def release_all(self) -> None:
        for session_id in list(self._held):
            self.release(session_id)

    def state(self, session_id: str) -> LockState:
        if session_id in self._held:
            return LockState.OURS
        try:
            fd = os.open(self._path(session_id), os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return LockState.ABSENT
        except OSError:
            return LockState.HELD  # cannot look: assume the worst, never steal
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return LockState.HELD
        finally:
            os.close(fd)  # closing drops the probe's own shared lock
        return LockState.FREE

    def forget(self, session_id: str) -> None:
        """Remove a free lock file (after a take-over); never one that is held."""
        if self.state(session_id) is LockState.FREE:
            with contextlib.suppress(OSError):
                self._path(session_id).unlink()


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def owner_alive(locks: OwnerLocks, session_id: str, pid: int | None) -> bool:
    """Whether another live corral process runs ``session_id`` (see the module docstring)."""
    state = locks.state(session_id)
    if state is LockState.HELD:
        return True
    if state in (LockState.FREE, LockState.OURS):
        return False
    return pid is not None and pid != os.getpid() and pid_alive(pid)
