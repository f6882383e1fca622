"""A recorded session store's SQLite database kept as SQL text (``testing/_record_stores._dump``)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from corral.testing import _record_stores


def test_the_dump_rebuilds_the_tables_and_closes_its_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "store.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE session (id TEXT, title TEXT, n INTEGER)")
        conn.executemany("INSERT INTO session VALUES (?, ?, ?)", [("a", "it's", 1), ("b", None, 2)])
        conn.execute("CREATE TABLE other (x)")
    conn.close()
    opened: list[Any] = []
    real_connect = sqlite3.connect

    class Tracked(sqlite3.Connection):
        closed = False

        def close(self) -> None:
            self.closed = True
            super().close()

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = real_connect(*args, factory=Tracked, **kwargs)
        opened.append(conn)
        return conn

    monkeypatch.setattr(_record_stores.sqlite3, "connect", connect)
    text = _record_stores._dump(db, ["session", "missing"])
    monkeypatch.undo()
    assert [c.closed for c in opened] == [True]
    assert "other" not in text
    rebuilt = sqlite3.connect(":memory:")
    try:
        rebuilt.executescript(text)
        rows = rebuilt.execute("SELECT * FROM session ORDER BY id").fetchall()
    finally:
        rebuilt.close()
    assert rows == [("a", "it's", 1), ("b", None, 2)]
