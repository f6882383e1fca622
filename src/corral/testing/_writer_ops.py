"""Writer operations for tests that run on both writers, the thread and the process.

An operation a :class:`~corral.sessions._writer_process.ProcessDbWriter` runs must pickle, so
these are module-level functions (wrapped in :class:`~corral._db.Op`), and what they wait on is
a file, which the test process and the writer's process both see.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from ..errors import QueueError

POLL = 0.002


class Latch:
    """A one-shot event across processes: set once its file exists."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)

    def set(self) -> None:
        Path(self.path).touch()

    def is_set(self) -> bool:
        return Path(self.path).exists()

    def wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not self.is_set():
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL)
        return True


def hold(conn: sqlite3.Connection, started: Latch, release: Latch, timeout: float) -> None:
    """Keep the writer inside this operation until ``release`` is set (``timeout`` at most)."""
    started.set()
    release.wait(timeout)


def value(conn: sqlite3.Connection, result: Any) -> Any:
    """Write nothing and answer ``result``."""
    return result


def then_fail(conn: sqlite3.Connection, operation: Any, message: str) -> None:
    """Run ``operation``, then raise :class:`~corral.errors.QueueError`: its writes are undone."""
    operation(conn)
    raise QueueError(message)


def break_the_commit(conn: sqlite3.Connection, operation: Any) -> None:
    """Run ``operation`` with foreign keys checked only at COMMIT, so a bad reference fails the
    commit of the whole batch rather than this operation."""
    conn.execute("PRAGMA defer_foreign_keys = ON")
    operation(conn)


def duplicate_prompts(conn: sqlite3.Connection) -> None:
    """One INSERT that violates the prompts' primary key."""
    conn.execute(
        "INSERT INTO prompts (id, session_id, position, state, text, attachments,"
        " launch, created_at, updated_at) SELECT id, session_id, position + 100, state,"
        " text, attachments, launch, created_at, updated_at FROM prompts"
    )


def set_model(conn: sqlite3.Connection, session_id: str, model: str) -> None:
    conn.execute("UPDATE sessions SET model = ? WHERE id = ?", (model, session_id))


def stuck(conn: sqlite3.Connection, marker: str, seconds: float) -> None:
    """Leave ``marker`` on disk, then stay inside the transaction for ``seconds``."""
    Path(marker).write_text("yes")
    time.sleep(seconds)


def connection(conn: sqlite3.Connection) -> sqlite3.Connection:
    """Answer something that does not pickle: the connection itself."""
    return conn


def fail_holding_connection(conn: sqlite3.Connection, message: str) -> None:
    """Raise an error that does not pickle (it keeps the connection)."""
    error = QueueError(message)
    error.conn = conn  # type: ignore[attr-defined]
    raise error


class Unreadable:
    """Pickles in the writer's process, and cannot be unpickled in the one that reads it."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (_unreadable, ())


def _unreadable() -> None:
    raise ValueError("this value cannot be read back")


def unreadable(conn: sqlite3.Connection) -> Unreadable:
    """Answer something whose pickle cannot be read."""
    return Unreadable()


class OddError(Exception):
    """An error that cannot be rebuilt from its ``args`` alone (its ``__new__`` wants more)."""

    def __new__(cls, message: str, *, code: int) -> OddError:
        return super().__new__(cls, message)

    def __init__(self, message: str, *, code: int) -> None:
        super().__init__(message)


def fail_oddly(conn: sqlite3.Connection, message: str) -> None:
    raise OddError(message, code=1)
