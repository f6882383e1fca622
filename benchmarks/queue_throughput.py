"""Prompt queue throughput: enqueue → deliver with durable writes, against raw fsync'd inserts.

The anchor is the cheapest durable write SQLite offers this machine: one ``INSERT`` per committed
transaction in WAL mode with ``synchronous=FULL``. The measured path is the whole session layer —
``SessionManager.send`` → claim (``sending``) → the scripted adapter's ``send`` → ack (``delivered``)
→ the adapter's reply events → ``TurnCompleted`` — with every queue transition fsync'd.
"""

from __future__ import annotations

import asyncio
import sqlite3
import tempfile
import time
from pathlib import Path

from corral.events import TurnCompleted
from corral.sessions import AdapterResolver, SessionManager, SessionSpec
from corral.testing.scripted_adapter import ScriptedAdapter


def raw_inserts(path: Path, n: int) -> float:
    """Inserts per second, one fsync'd transaction each."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
    start = time.perf_counter()
    for i in range(n):
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO t (body) VALUES (?)", (f"prompt-{i}",))
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return n / elapsed


async def _deliver(path: Path, n: int, *, one_by_one: bool) -> float:
    resolver = AdapterResolver(
        {"scripted": ScriptedAdapter.configured()}, use_env=False, use_entry_points=False
    )
    async with SessionManager(path, resolver=resolver, queue_limit=n + 1) as mgr:
        sid = (await mgr.create_session(SessionSpec(adapter_id="scripted"))).id
        after = mgr.get_session(sid).last_seq

        async def turns(count: int) -> None:
            nonlocal after
            seen = 0
            async for env in mgr.subscribe(sid, after=after):
                after = env.seq
                if isinstance(env.event, TurnCompleted):
                    seen += 1
                    if seen == count:
                        return

        start = time.perf_counter()
        if one_by_one:
            for i in range(n):
                mgr.send(sid, f"prompt-{i}")
                await turns(1)
        else:
            for i in range(n):
                mgr.send(sid, f"prompt-{i}")
            await turns(n)
        return n / (time.perf_counter() - start)


def run(n: int = 300) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="corral-bench-") as tmp:
        root = Path(tmp)
        anchor = raw_inserts(root / "raw.db", n)
        burst = asyncio.run(_deliver(root / "burst.db", n, one_by_one=False))
        serial = asyncio.run(_deliver(root / "serial.db", n, one_by_one=True))
    print(f"raw fsync'd SQLite inserts (anchor) : {anchor:9.0f} /s")
    print(f"enqueue→deliver, queued in a burst  : {burst:9.0f} /s   ratio {burst / anchor:.3f}")
    print(f"enqueue→deliver, one at a time      : {serial:9.0f} /s   ratio {serial / anchor:.3f}")
    return {"anchor": anchor, "burst": burst, "serial": serial}
