"""m005: the intent replaces permission_policy; what a caller asked for is kept as the intent."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from corral import _db
from corral.intents import Intent
from corral.sessions import SessionStore


def test_old_sessions_keep_what_was_asked_as_their_intent(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    for migration in _db.MIGRATIONS[:4]:
        migration(conn)
        conn.execute("INSERT INTO _migrations VALUES (?, 'then')", (migration.__name__,))
    now = _db.to_db_time(_db.utcnow())
    for sid, policy, intent in (
        ("a", "review", None),
        ("b", "work", "explain"),
        ("c", "odd", None),
    ):
        conn.execute(
            "INSERT INTO sessions (id, adapter_id, cwd, permission_policy, intent, state,"
            " created_at, updated_at) VALUES (?, 'x', '/tmp', ?, ?, 'ended', ?, ?)",
            (sid, policy, intent, now, now),
        )
        conn.execute("INSERT INTO session_view (session_id, updated_at) VALUES (?, ?)", (sid, now))
    conn.close()

    store = SessionStore(_db.connect(path))
    assert store.get("a").intent is Intent.REVIEW
    assert store.get("b").intent is Intent.WORK  # "explain" was never an intent
    assert store.get("c").intent is None
    assert store.get("a").allowed_commands == ()
    columns = {r["name"] for r in store.conn.execute("PRAGMA table_info(sessions)")}
    assert "permission_policy" not in columns and "allowed_commands" in columns
