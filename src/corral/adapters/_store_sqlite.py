"""Reading a vendor's SQLite store (OpenCode, Hermes): read-only, bounded, never raising.

The database is opened with ``mode=ro`` (WAL readers see committed rows, and nothing is ever
written), a short busy timeout, and a progress handler that aborts a query after
:data:`MAX_STEPS` virtual-machine steps, so a huge or corrupt store cannot stall a scan.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ._handoff import ExternalSession
from ._store_common import FileStat, same_dir

BUSY_TIMEOUT = 0.5
MAX_STEPS = 50_000_000
_STEP = 10_000


def stat_db(path: Path) -> FileStat | None:
    """The database's stat, its mtime and size counting the write-ahead log."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    mtime, size = st.st_mtime, st.st_size
    try:
        wal = os.stat(f"{path}-wal")
    except OSError:
        pass
    else:
        mtime, size = max(mtime, wal.st_mtime), size + wal.st_size
    return FileStat(str(path), mtime, size, st.st_ino)


class StoreUnreadable(Exception):
    """A store database that exists but could not be queried (locked, corrupt, too slow)."""


def query(
    path: str | Path, sql: str, params: Sequence[Any] = (), *, strict: bool = False
) -> list[sqlite3.Row]:
    """Rows of one read-only query; ``[]`` when the store cannot be read (missing, locked, bad).

    With ``strict``, a database that exists but cannot be queried raises
    :class:`StoreUnreadable` instead, so a listing can say so rather than show nothing.
    """
    if not os.path.isfile(path):
        return []
    uri = Path(path).absolute().as_uri() + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT, check_same_thread=False)
    except sqlite3.Error as exc:
        if strict:
            raise StoreUnreadable(f"{path}: {exc}") from None
        return []
    steps = [0]

    def progress() -> int:
        steps[0] += _STEP
        return 1 if steps[0] > MAX_STEPS else 0

    try:
        conn.row_factory = sqlite3.Row
        conn.set_progress_handler(progress, _STEP)
        return list(conn.execute(sql, tuple(params)))
    except sqlite3.Error as exc:
        if strict:
            raise StoreUnreadable(f"{path}: {exc}") from None
        return []
    finally:
        conn.close()


def text(row: sqlite3.Row, key: str) -> str | None:
    value = row[key]
    return value if isinstance(value, str) and value else None


def number(row: sqlite3.Row, key: str) -> float | None:
    value = row[key]
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def scan_rows(
    stats: Iterable[FileStat],
    headers: Callable[[FileStat], list[ExternalSession]],
    since: float | None,
) -> Iterator[ExternalSession]:
    """The sessions of each database changed after ``since``; an unreadable database ends the
    listing (the hook lists nothing it cannot read; the index says why, ``IndexStats``)."""
    for stat in stats:
        try:
            found = headers(stat)
        except StoreUnreadable:
            return
        for entry in found:
            if since is None or entry.mtime > since:
                yield entry


def latest_sid(entries: Iterable[ExternalSession], cwd: str) -> str | None:
    """The most recently changed session of ``cwd``."""
    found = [e for e in entries if e.cwd is not None and same_dir(e.cwd, cwd)]
    return max(found, key=lambda e: e.mtime).sid if found else None
