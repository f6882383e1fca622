"""The live mirror of a database store (OpenCode, Hermes): rows replayed as the CLI writes them.

The recorded rows (``corral record AGENT store``) are inserted into an empty database of the same
schema in two batches while the mirror polls; OpenCode's tool part is first written ``running``
and rewritten ``completed`` later, the way OpenCode updates parts in place.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from corral.adapters._store_tail import PollTail
from corral.adapters._stores import scan
from corral.events import ToolCallCompleted, ToolCallStarted

from ._recorded import Recorded, parse_all, recorded
from .test_store_mirror import take

DB_CLIS = {"opencode": ("session", "message", "part"), "hermes": ("sessions", "messages")}


@pytest.fixture(params=list(DB_CLIS))
def rec(request: pytest.FixtureRequest, tmp_path: Path) -> Recorded:
    return recorded(request.param, tmp_path)


def _rows(path: Path, table: str) -> tuple[str, list[str], list[tuple[Any, ...]]]:
    with sqlite3.connect(path) as conn:
        (schema,) = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type='table' AND name=?", (table,)
        ).fetchone()
        cursor = conn.execute(f'SELECT * FROM "{table}" ORDER BY rowid')
        columns = [d[0] for d in cursor.description]
        return schema, columns, cursor.fetchall()


def _emptied(path: Path, names: tuple[str, ...]) -> dict[str, tuple[str, list[str], list[Any]]]:
    """The recorded rows of ``names``; the database is left with their schema and no rows."""
    tables = {t: _rows(path, t) for t in names}
    path.unlink()
    with sqlite3.connect(path) as conn:
        for schema, _, _ in tables.values():
            conn.execute(schema)
    return tables


def _insert(path: Path, table: str, columns: list[str], rows: list[tuple[Any, ...]]) -> None:
    marks = ",".join("?" * len(columns))
    with sqlite3.connect(path) as conn:
        conn.executemany(f'INSERT INTO "{table}" VALUES ({marks})', rows)


async def test_mirror_follows_rows_as_they_are_written(rec: Recorded) -> None:
    (entry,) = scan(rec.module, rec.env)
    path = Path(entry.path)
    expected = parse_all(rec.module, path)
    tables = _emptied(path, DB_CLIS[rec.agent])
    mirror = rec.module.mirror(rec.cwd, entry.sid, rec.env)
    assert isinstance(mirror, PollTail)
    mirror.interval, mirror.max_interval = 0.01, 0.05
    events = mirror.events()
    held: list[tuple[str, list[str], tuple[Any, ...]]] = []
    try:
        for table, (_, columns, rows) in tables.items():
            half = rows[: len(rows) // 2] if table in ("messages", "part") else rows
            if table == "part":
                half, held = _running_first(columns, half)
            _insert(path, table, columns, half)
        first = await take(events, 1)
        _complete(path, held)  # the tool finishes, then the rest of the turn is written
        for table, (_, columns, rows) in tables.items():
            if table in ("messages", "part"):
                _insert(path, table, columns, rows[len(rows) // 2 :])
        rest = await take(events, len(expected) - 1)
    finally:
        await mirror.close()
    assert first + rest == expected
    started = [e for e in expected if isinstance(e, ToolCallStarted)]
    done = [e for e in expected if isinstance(e, ToolCallCompleted)]
    assert len(started) == len(done) == 1


def _running_first(
    columns: list[str], rows: list[tuple[Any, ...]]
) -> tuple[list[tuple[Any, ...]], list[tuple[str, list[str], tuple[Any, ...]]]]:
    """OpenCode's tool part as first written (``running``); the recorded row is held back."""
    data_at, updated_at = columns.index("data"), columns.index("time_updated")
    out, held = [], []
    for row in rows:
        part = json.loads(row[data_at])
        if part.get("type") == "tool" and part["state"]["status"] == "completed":
            running = dict(part, state={**part["state"], "status": "running"})
            early = list(row)
            early[data_at], early[updated_at] = json.dumps(running), row[updated_at] - 1
            out.append(tuple(early))
            held.append(("part", columns, row))
        else:
            out.append(row)
    return out, held


def _complete(path: Path, held: list[tuple[str, list[str], tuple[Any, ...]]]) -> None:
    with sqlite3.connect(path) as conn:
        for _, columns, row in held:
            values = dict(zip(columns, row, strict=True))
            conn.execute(
                "UPDATE part SET data = ?, time_updated = ? WHERE id = ?",
                (values["data"], values["time_updated"], values["id"]),
            )


async def test_mirror_of_a_missing_database_waits_quietly(rec: Recorded, tmp_path: Path) -> None:
    env = {k: v.replace(str(rec.home), str(tmp_path / "void")) for k, v in rec.env.items()}
    mirror = rec.module.mirror(rec.cwd, "nothing", env)
    mirror.interval, mirror.max_interval = 0.01, 0.05
    events = mirror.events()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(events.__anext__(), 0.3)
    await mirror.close()
