"""Opening corral's database again in one process keeps the locks its first connection holds.

SQLite's locks are POSIX record locks, which a process loses on a file as soon as it closes any
descriptor of it. ``_db.connect`` once opened and closed the ``-shm`` file to tighten its mode,
so the second connection of a process (``SessionManager`` opens three) dropped the shared lock
the first one held on the shared-memory index. Another process then reset that index and shrank
the file under the mapping: the SIGBUS seen in the crash trials' ``corral`` child.

Worse, the other process, closing, took itself for the last one and deleted the ``-wal``, so this
process's later commits were lost. Both are checked from another process, the only place they
show.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from corral import _db
from corral._paths import tighten_file
from corral.sessions import SessionManager
from corral.sessions._writer_process import ProcessDbWriter

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX record locks")

# The byte of ``-shm`` that every connection holds shared while it has the index mapped (SQLite's
# unix VFS: UNIX_SHM_BASE 120 + SQLITE_SHM_NLOCK 8). A process that can take it exclusively takes
# itself for the only one and re-initialises the index.
DMS_BYTE = 128
_PROBE = """
import fcntl, os, sys
try:
    fd = os.open(sys.argv[1], os.O_RDWR)
except FileNotFoundError:
    print("absent")
    raise SystemExit
try:
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, int(sys.argv[2]), 0)
except OSError:
    print("held")
else:
    print("free")
"""


def dms_lock(db: Path) -> str:
    """``held`` if some process holds a lock on ``db``'s shared-memory index, else ``free``
    (``absent``: there is no index, as after the last connection closed)."""
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, f"{db}-shm", str(DMS_BYTE)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return out.stdout.strip()


def test_the_probe_sees_a_connection_and_its_end(tmp_path: Path) -> None:
    db = tmp_path / "corral.db"
    conn = _db.connect(db)
    assert dms_lock(db) == "held"
    conn.close()
    assert dms_lock(db) in ("free", "absent")


def test_a_second_connection_keeps_the_first_ones_lock(tmp_path: Path) -> None:
    db = tmp_path / "corral.db"
    first = _db.connect(db)
    second = _db.connect(db)  # tightens the side files' modes, which now exist
    assert dms_lock(db) == "held"
    second.close()  # SQLite's own close keeps the locks another connection needs
    assert dms_lock(db) == "held"
    first.close()


def test_writes_after_another_process_came_and_went_reach_the_file(tmp_path: Path) -> None:
    """What the dropped lock cost: another process (say, ``corral sessions list`` next to
    ``corral chat``) took itself for the last one when it closed, checkpointed and deleted the
    ``-wal``; this process's later commits went to the deleted file, seen by no other process."""
    db = tmp_path / "corral.db"
    first = _db.connect(db)
    second = _db.connect(db)  # as a SessionManager opens its connections
    _run_sql(db, "SELECT count(*) FROM _migrations")  # another process opens and closes it
    with _db.transaction(first):
        first.execute("INSERT INTO _migrations VALUES ('written-after', 'now')")
    assert _run_sql(db, "SELECT count(*) FROM _migrations WHERE name = 'written-after'") == "1"
    first.close()
    second.close()


def _run_sql(db: Path, query: str) -> str:
    code = "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])"
    out = subprocess.run(
        [sys.executable, "-c", code, str(db), query],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return out.stdout.strip()


@pytest.mark.parametrize("writer", ["thread", "process"])
def test_a_manager_keeps_its_lock_with_all_its_connections_open(
    tmp_path: Path, writer: str
) -> None:
    db = tmp_path / "corral.db"
    mgr = SessionManager(db, writer=writer)
    try:
        if writer == "process":  # its process holds the lock too: end it, so this one's show
            writer_process = mgr._writer
            assert isinstance(writer_process, ProcessDbWriter) and writer_process.pid
            os.kill(writer_process.pid, signal.SIGKILL)
            writer_process._thread.join(30)  # the receiver reaps it, then ends
            assert not writer_process._thread.is_alive()
        assert dms_lock(db) == "held"
    finally:
        mgr._queue_conn.close()
        mgr._store_conn.close()
        mgr._writer.close()


def test_the_files_are_private_new_or_old(tmp_path: Path) -> None:
    db = tmp_path / "corral.db"
    _db.connect(db).close()
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    for name in (db.name, f"{db.name}-wal", f"{db.name}-shm"):
        (tmp_path / name).touch()
        (tmp_path / name).chmod(0o644)
    conn = _db.connect(db)
    try:
        for name in (db.name, f"{db.name}-wal", f"{db.name}-shm"):
            assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600, name
    finally:
        conn.close()


def test_tightening_never_widens_a_mode(tmp_path: Path) -> None:
    kept = tmp_path / "read-only"
    kept.touch()
    kept.chmod(0o440)
    tighten_file(kept)
    assert stat.S_IMODE(kept.stat().st_mode) == 0o400
