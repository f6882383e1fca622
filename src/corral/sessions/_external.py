"""The index of sessions found in the agents' own stores (started in a terminal, or by corral).

:class:`ExternalIndex` keeps one row per store file in corral's database (``external_files``:
path, store, mtime, size → the session headers read from it). :meth:`~ExternalIndex.refresh`
walks every store with ``stat`` only and reads the headers of the files whose (mtime, size)
changed or that are new; rows of files that disappeared are dropped. A warm refresh therefore
reads no file, and a listing is one query plus decoding. See docs/handoff.md and decision 026.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType

import msgspec

from .._db import to_db_time, transaction, utcnow
from ..adapters._handoff import ExternalSession
from ..adapters._store_common import FileStat
from ..adapters._store_sqlite import StoreUnreadable
from ..adapters._stores import STORE_MODULES, headers, merge, primary_stores
from ..errors import ConfigError

READERS = 16
"""Threads reading headers of changed files at once."""
PARALLEL_FROM = 64
"""Fewer changed files than this are read in the calling thread."""

_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(list[ExternalSession]).decode
_decode_all = msgspec.json.Decoder(list[list[ExternalSession]]).decode


def _lenient(blob: str) -> list[ExternalSession]:
    try:
        return _decode(blob)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return []


class IndexStats(msgspec.Struct, frozen=True, kw_only=True):
    """What one refresh did."""

    files: int
    """Store files seen (stat only)."""
    read: int
    """Files whose headers were read (new or changed)."""
    removed: int
    """Rows dropped because their file is gone."""
    seconds: float
    problems: list[str] = msgspec.field(default_factory=list)
    """Store files that exist but could not be read now (their earlier rows are kept)."""


def store_ids(agent: str | None) -> list[str]:
    """The store (primary adapter id) ``agent`` lists under; every store for ``None``.

    An adapter without a store reader is refused by name, never answered with an empty list.
    """
    stores = [a for a, _ in primary_stores()]
    if agent is None:
        return stores
    if agent not in STORE_MODULES:
        raise ConfigError(
            f"agent {agent!r} has no session-store reader (known: {', '.join(sorted(STORE_MODULES))})"
        )
    module = STORE_MODULES[agent]
    return [a for a, m in primary_stores() if m.__name__.endswith(module)]


def _read_headers(module: ModuleType, stale: list[FileStat]) -> list[list[ExternalSession] | str]:
    """The headers of ``stale`` (or, for a store file that cannot be read now, why), read by
    :data:`READERS` threads when there are many: a cold header read waits on the disk, and the
    waits overlap (the reads release the GIL)."""

    def read(stat: FileStat) -> list[ExternalSession] | str:
        try:
            return headers(module, stat)
        except StoreUnreadable as exc:
            return f"{module.AGENT}: {exc}"

    if len(stale) < PARALLEL_FROM:
        return [read(stat) for stat in stale]
    with ThreadPoolExecutor(max_workers=READERS, thread_name_prefix="corral-index") as pool:
        return list(pool.map(read, stale))


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


class ExternalIndex:
    """Store-file headers cached in corral's database, refreshed incrementally."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def refresh(
        self, *, env: Mapping[str, str] | None = None, agents: Iterable[str] | None = None
    ) -> IndexStats:
        """Bring the rows of the stores of ``agents`` (default: all) up to date under ``env``."""
        started = time.perf_counter()
        wanted = set(agents) if agents is not None else None
        files = read = removed = 0
        problems: list[str] = []
        for store, module in primary_stores():
            if wanted is not None and store not in wanted:
                continue
            f, r, d = self._refresh_store(store, module, env, problems)
            files, read, removed = files + f, read + r, removed + d
        return IndexStats(
            files=files,
            read=read - len(problems),
            removed=removed,
            seconds=time.perf_counter() - started,
            problems=problems,
        )

    def _refresh_store(
        self, store: str, module: ModuleType, env: Mapping[str, str] | None, problems: list[str]
    ) -> tuple[int, int, int]:
        roots = [str(r) for r in module.store_roots(env)]
        known = {
            row[0]: (row[1], row[2])
            for row in self.conn.execute(
                "SELECT path, mtime, size FROM external_files WHERE store = ?", (store,)
            )
            if _under(row[0], roots)
        }
        seen: set[str] = set()
        stale: list[FileStat] = []
        for stat in module.files(env):
            seen.add(stat.path)
            if known.get(stat.path) != (stat.mtime, stat.size):
                stale.append(stat)
        now = to_db_time(utcnow())
        changed = []
        for stat, entries in zip(stale, _read_headers(module, stale), strict=True):
            if isinstance(entries, str):
                problems.append(entries)  # unreadable now: keep what was indexed before
                continue
            changed.append(
                (stat.path, store, stat.mtime, stat.size, _encode(entries).decode(), now)
            )
        gone = [p for p in known if p not in seen]
        if changed or gone:
            with transaction(self.conn):
                self.conn.executemany(
                    "INSERT OR REPLACE INTO external_files"
                    " (path, store, mtime, size, sessions, indexed_at) VALUES (?, ?, ?, ?, ?, ?)",
                    changed,
                )
                self.conn.executemany(
                    "DELETE FROM external_files WHERE path = ?", [(p,) for p in gone]
                )
        return len(seen), len(changed), len(gone)

    def sessions(
        self,
        *,
        agent: str | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> list[ExternalSession]:
        """Indexed sessions, newest first, one per (agent, id); filtered by store and cwd.

        With ``env``, only the files under that environment's store roots (the index may hold
        other homes' rows, e.g. a test's or another user's ``HOME``).
        """
        stores = store_ids(agent)
        roots = {s: [str(r) for r in m.store_roots(env)] for s, m in primary_stores()}
        entries: list[ExternalSession] = []
        marks = ",".join("?" * len(stores))
        query = f"SELECT path, store, sessions FROM external_files WHERE store IN ({marks})"
        blobs = [
            blob
            for path, store, blob in self.conn.execute(query, stores)
            if env is None or _under(path, roots.get(store, []))
        ]
        try:  # one decode for all rows (each row is a JSON array of entries)
            groups = _decode_all(b"[" + b",".join(b.encode() for b in blobs) + b"]")
        except (msgspec.DecodeError, msgspec.ValidationError):
            groups = [_lenient(b) for b in blobs]  # a damaged row costs only itself
        for group in groups:
            entries.extend(group)
        if cwd is not None:
            entries = [e for e in entries if _same_cwd(e.cwd, cwd)]
        return merge(entries)


def _same_cwd(recorded: str | None, cwd: str) -> bool:
    if recorded is None:
        return False
    if os.path.normpath(recorded) == os.path.normpath(cwd):
        return True
    return os.path.basename(recorded.rstrip("/")) == os.path.basename(
        cwd.rstrip("/")
    ) and os.path.realpath(recorded) == os.path.realpath(cwd)
