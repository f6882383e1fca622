"""The one place corral opens SQLite connections.

Every connection is opened by :func:`connect`: WAL journal, a ``busy_timeout`` so two processes (the
server and ``corral chat``) can share one file, ``foreign_keys=ON``, ``synchronous=FULL`` so that a
committed transaction survives a crash of corral *and* of the machine (the prompt queue's guarantees
rest on that), and autocommit mode (``isolation_level=None``): writers open their transactions
explicitly with :func:`transaction` (``BEGIN IMMEDIATE``), so a read-then-write never races another
writer.

Schema changes are ordered, named migration functions (:data:`MIGRATIONS`), each applied once and
recorded in the ``_migrations`` table with the UTC time it ran. Datetimes are stored as ISO-8601
strings with an explicit ``+00:00`` offset and always read back timezone-aware.

A database holds transcripts (whatever an agent read), so it is private: its directory is created
``0700``, the file and its ``-wal`` / ``-shm`` side files ``0600`` (SQLite gives side files the mode
of the main file; existing looser files are tightened too).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ._paths import FILE_MODE, ensure_private_dir, home_dir, tighten_file

BUSY_TIMEOUT_MS = 10_000

Migration = Callable[[sqlite3.Connection], None]


def utcnow() -> datetime:
    return datetime.now(UTC)


def to_db_time(value: datetime) -> str:
    """ISO-8601 in UTC; a naive datetime is refused rather than guessed."""
    if value.tzinfo is UTC:  # what corral's clocks give: no conversion to make
        return value.isoformat()
    if value.tzinfo is None:
        raise ValueError("naive datetime: corral stores UTC-aware datetimes only")
    return value.astimezone(UTC).isoformat()


def from_db_time(value: str) -> datetime:
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def connect(path: str | Path, *, synchronous: str = "FULL") -> sqlite3.Connection:
    """Open ``path`` with corral's pragmas and bring its schema up to date."""
    if str(path) != ":memory:":
        _private(Path(path))
    conn = sqlite3.connect(
        str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
    )
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(f"PRAGMA synchronous = {synchronous}")
    conn.execute("PRAGMA foreign_keys = ON")
    migrate(conn)
    return conn


def _private(path: Path) -> None:
    """Create the database file ``0600`` if it is new; tighten it and its side files if not.

    Without opening a file that exists: this process may already have a connection to it, and
    closing any descriptor of a file drops every POSIX lock the process holds on it, SQLite's
    included. With the lock on ``-shm`` gone, another process opening the database takes itself
    for the only one and resets the shared-memory index, shrinking the file under this process's
    mapping (the SIGBUS a crash trial's corral died of; ``tests/unit/test_db_locks.py``)."""
    # a new directory is created private; so is corral's home, whoever created it first
    if not path.parent.exists() or path.parent.absolute() == home_dir().absolute():
        ensure_private_dir(path.parent)
    with suppress(FileExistsError):  # created here, it has no connection: no lock to drop
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, FILE_MODE))
    for name in (path.name, path.name + "-wal", path.name + "-shm", path.name + "-journal"):
        with suppress(FileNotFoundError):  # a side file SQLite removed meanwhile
            tighten_file(path.with_name(name))


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on error): the write lock is taken up front."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


# ── migrations ──────────────────────────────────────────────────────────────────────────────────


def m001_sessions(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            adapter_id TEXT NOT NULL,
            model TEXT,
            effort TEXT,
            cwd TEXT,
            permission_policy TEXT NOT NULL,
            intent TEXT,
            state TEXT NOT NULL,
            agent_session_id TEXT,
            agent_info TEXT,
            last_error TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )"""
    )
    conn.execute(
        """CREATE TABLE events (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            ts TEXT NOT NULL,
            source TEXT NOT NULL,
            type TEXT NOT NULL,
            envelope TEXT NOT NULL,
            PRIMARY KEY (session_id, seq)
        ) WITHOUT ROWID"""
    )


def m002_prompt_queue(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE prompts (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            state TEXT NOT NULL,
            text TEXT NOT NULL,
            attachments TEXT NOT NULL,
            launch TEXT NOT NULL,
            version INTEGER NOT NULL DEFAULT 1,
            attempts INTEGER NOT NULL DEFAULT 0,
            error TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            sending_at TEXT,
            delivered_at TEXT
        )"""
    )
    conn.execute("CREATE INDEX prompts_by_session ON prompts(session_id, state, position)")


def m003_drafts(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE session_view (
            session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
            draft_text TEXT NOT NULL DEFAULT '',
            draft_attachments TEXT NOT NULL DEFAULT '[]',
            edit_target TEXT,
            scroll_position REAL,
            follow INTEGER NOT NULL DEFAULT 1,
            updated_at TEXT NOT NULL
        )"""
    )


def m004_session_owner(conn: sqlite3.Connection) -> None:
    # The pid of the corral process running the session, so a second process (``corral chat``
    # next to ``corral serve``) never "recovers" a session another live process is running.
    conn.execute("ALTER TABLE sessions ADD COLUMN owner_pid INTEGER")


def m005_session_intent(conn: sqlite3.Connection) -> None:
    # One permission vocabulary (docs/intents.md): the intent replaces ``permission_policy``. The
    # old policy column was stored and applied nowhere; what a caller asked for becomes the intent
    # (an unknown word becomes no intent), and the project's allowed commands get a column.
    conn.execute(
        """UPDATE sessions SET intent = CASE
            WHEN intent IN ('ask', 'review', 'work', 'act-pr', 'full') THEN intent
            WHEN permission_policy IN ('ask', 'review', 'work', 'act-pr') THEN permission_policy
            ELSE NULL END"""
    )
    conn.execute("ALTER TABLE sessions DROP COLUMN permission_policy")
    conn.execute("ALTER TABLE sessions ADD COLUMN allowed_commands TEXT NOT NULL DEFAULT '[]'")


MIGRATIONS: tuple[Migration, ...] = (
    m001_sessions,
    m002_prompt_queue,
    m003_drafts,
    m004_session_owner,
    m005_session_intent,
)
"""Applied in this order; a migration's function name is its identity. Append only."""


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply the migrations not yet recorded; return the names applied now."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    applied_now: list[str] = []
    for migration in MIGRATIONS:
        name = migration.__name__
        with transaction(conn):
            done = conn.execute("SELECT 1 FROM _migrations WHERE name = ?", (name,)).fetchone()
            if done:
                continue
            migration(conn)
            conn.execute(
                "INSERT INTO _migrations (name, applied_at) VALUES (?, ?)",
                (name, to_db_time(utcnow())),
            )
            applied_now.append(name)
    return applied_now


def m_board_events(conn: sqlite3.Connection) -> None:
    # The event board (seed 002 schema v1): one row per accepted event, ``id`` is the SSE resume
    # point. ``body`` is the event as viewers get it; the other columns exist to filter on.
    conn.execute(
        """CREATE TABLE board_events (
            id INTEGER PRIMARY KEY,
            ts TEXT NOT NULL,
            session TEXT NOT NULL,
            kind TEXT NOT NULL,
            running INTEGER NOT NULL,
            agent TEXT,
            task TEXT,
            body TEXT NOT NULL
        )"""
    )
    conn.execute("CREATE INDEX board_events_by_session ON board_events(session, id)")
    conn.execute("CREATE INDEX board_events_by_agent ON board_events(agent, id)")
    conn.execute("CREATE INDEX board_events_by_task ON board_events(task, id)")


MIGRATIONS = (*MIGRATIONS, m_board_events)


def m_handoff_links(conn: sqlite3.Connection) -> None:
    # Seed 003 hand-off: a corral session bound to a vendor session a terminal may drive.
    # ``mode`` is who writes now (``corral`` / ``terminal``); ``mirrored`` counts the transcript
    # mirror's events already shown, so a restarted mirror does not show them twice.
    conn.execute(
        """CREATE TABLE handoff_links (
            session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
            adapter_id TEXT NOT NULL,
            external_sid TEXT NOT NULL,
            cwd TEXT NOT NULL,
            mode TEXT NOT NULL,
            mirrored INTEGER NOT NULL DEFAULT 0,
            updated_at TEXT NOT NULL
        )"""
    )
    conn.execute("CREATE INDEX handoff_links_by_sid ON handoff_links(adapter_id, external_sid)")


MIGRATIONS = (*MIGRATIONS, m_handoff_links)


def m_external_files(conn: sqlite3.Connection) -> None:
    # The index of the vendors' session stores (docs/handoff.md, decision 026): one row per store
    # file, keyed by path; (mtime, size) says whether ``sessions`` (the headers read from it, a
    # JSON array) is still current, so a warm listing only stats files.
    conn.execute(
        """CREATE TABLE external_files (
            path TEXT PRIMARY KEY,
            store TEXT NOT NULL,
            mtime REAL NOT NULL,
            size INTEGER NOT NULL,
            sessions TEXT NOT NULL,
            indexed_at TEXT NOT NULL
        ) WITHOUT ROWID"""
    )
    conn.execute("CREATE INDEX external_files_by_store ON external_files(store)")


MIGRATIONS = (*MIGRATIONS, m_external_files)


def m_event_seq_reservations(conn: sqlite3.Connection) -> None:
    # Early fan-out (decision 046): an envelope may reach an observer before its transcript batch
    # is committed, but only with a ``seq`` at most ``reserved``, committed first; a process that
    # starts numbering a session starts after max(last stored seq, reserved), so no seq an observer
    # saw is reused after a crash. A clean close deletes the row.
    conn.execute(
        """CREATE TABLE event_seq_reservations (
            session_id TEXT PRIMARY KEY,
            reserved INTEGER NOT NULL
        ) WITHOUT ROWID"""
    )


MIGRATIONS = (*MIGRATIONS, m_event_seq_reservations)


class Op:
    """An operation as data: a module-level function and its arguments, run as
    ``fn(conn, *args)``. Unlike a closure it pickles, so a writer in another process can run it."""

    __slots__ = ("args", "fn")

    def __init__(self, fn: Callable[..., Any], *args: Any) -> None:
        self.fn = fn
        self.args = args

    def __call__(self, conn: sqlite3.Connection) -> Any:
        return self.fn(conn, *self.args)

    def __reduce__(self) -> tuple[Any, ...]:
        return (Op, (self.fn, *self.args))

    def __repr__(self) -> str:
        return f"Op({getattr(self.fn, '__qualname__', self.fn)!r}, ...)"
