"""A read-only live tail of a vendor transcript, as corral events (seed 003's mirror).

:class:`JsonlTail` polls a JSON-lines transcript: it reads only the bytes appended since the last
poll, keeps a cut last line for the next one, and starts over when the file shrank (truncated) or
was replaced (another inode: rotated), with a fresh parser so tool calls are not mismatched.
:class:`SnapshotTail` serves stores that rewrite one JSON document per change (Gemini's and
Qwen's chat files): it re-reads the document, bounded, when its size or mtime moved, and emits
the records past the ones already seen. Polls back off from ``interval`` to ``max_interval``
while nothing changes; ``close()`` ends ``events()`` within one poll. Nothing here writes.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

from .._process._decode import BadJson, loads
from ..events import Event
from ..events._text import storable_all

READ_LIMIT = 1 << 20
"""Bytes read per poll at most; the rest waits for the next (immediate) poll."""
LINE_LIMIT = 8 << 20
"""A line longer than this is dropped rather than buffered."""
SNAPSHOT_LIMIT = 64 << 20
"""A document larger than this is not re-read."""


class RecordParser(Protocol):
    """Turns one transcript record into corral events; never raises on content."""

    def feed(self, record: Any) -> list[Event]: ...


def sticky(locate: Callable[[], Path | None]) -> Callable[[], Path | None]:
    """``locate`` once found, kept while the path exists (a search per poll would cost a walk)."""
    found: list[Path] = []

    def cached() -> Path | None:
        if found and found[0].exists():
            return found[0]
        path = locate()
        found[:] = [path] if path is not None else []
        return path

    return cached


class StoreParser:
    """Base of the vendor transcript parsers: ``feed`` is total and its events are storable.

    Subclasses implement ``_feed``; a record it chokes on is skipped (agent output is untrusted,
    and one bad record must not end a mirror), and every event goes through the event-safety
    repair (:func:`corral.events._text.storable_all`) so the store can always encode it.
    """

    skipped = 0
    """Records that raised inside ``_feed`` (a parser bug to look at, never a crash)."""

    def feed(self, record: Any) -> list[Event]:
        try:
            return storable_all(self._feed(record))
        except Exception:
            self.skipped += 1
            return []

    def _feed(self, record: Any) -> list[Event]:  # pragma: no cover - abstract
        raise NotImplementedError


def safe_feed(parser: RecordParser, record: Any) -> list[Event]:
    """``parser.feed`` with a last guard: a record the parser chokes on is skipped."""
    try:
        return parser.feed(record)
    except Exception:
        return []


class _Tail:
    def __init__(
        self,
        locate: Callable[[], Path | None],
        make_parser: Callable[[], RecordParser],
        *,
        interval: float = 0.2,
        max_interval: float = 2.0,
    ) -> None:
        if not 0 < interval <= max_interval:
            raise ValueError("need 0 < interval <= max_interval")
        self._locate = sticky(locate)
        self._make_parser = make_parser
        self.interval = interval
        self.max_interval = max_interval
        self._closed = asyncio.Event()
        self.resets = 0
        """How many times the file was found truncated or replaced."""

    async def close(self) -> None:
        self._closed.set()

    async def _sleep(self, seconds: float) -> bool:
        """Wait ``seconds`` or until closed; ``True`` when closed."""
        try:
            await asyncio.wait_for(self._closed.wait(), seconds)
        except TimeoutError:
            return False
        return True

    def _poll(self) -> list[Event] | None:  # pragma: no cover - overridden
        raise NotImplementedError

    async def events(self) -> AsyncIterator[Event]:
        delay = self.interval
        while not self._closed.is_set():
            batch = await asyncio.to_thread(self._poll)
            for event in batch or ():
                yield event
            if batch is None:  # more bytes are waiting: read on at once
                delay = self.interval
                continue
            delay = self.interval if batch else min(delay * 2, self.max_interval)
            if await self._sleep(delay):
                return


class JsonlTail(_Tail):
    """Tail a JSON-lines file (the file may not exist yet: it is waited for)."""

    def __init__(
        self,
        locate: Callable[[], Path | None],
        make_parser: Callable[[], RecordParser],
        **kwargs: Any,
    ) -> None:
        super().__init__(locate, make_parser, **kwargs)
        self._parser = make_parser()
        self._inode: int | None = None
        self._offset = 0
        self._pending = b""
        self._dropping = False

    def _reset(self, inode: int | None) -> None:
        if self._inode is not None:
            self.resets += 1
        self._inode, self._offset, self._pending, self._dropping = inode, 0, b"", False
        self._parser = self._make_parser()

    def _poll(self) -> list[Event] | None:
        path = self._locate()
        if path is None:
            return []
        try:
            with open(path, "rb") as handle:
                st = os.fstat(handle.fileno())
                if st.st_ino != self._inode or st.st_size < self._offset:
                    self._reset(st.st_ino)
                if st.st_size == self._offset:
                    return []
                handle.seek(self._offset)
                data = handle.read(READ_LIMIT)
        except OSError:
            return []
        self._offset += len(data)
        events = self._lines(data)
        more = self._offset < st.st_size and len(data) == READ_LIMIT
        return None if more and not events else events

    def _lines(self, data: bytes) -> list[Event]:
        *lines, rest = (self._pending + data).split(b"\n")
        if len(rest) > LINE_LIMIT:
            rest, self._dropping = b"", True
        self._pending = rest
        out: list[Event] = []
        for line in lines:
            if self._dropping:  # the tail end of an over-long line
                self._dropping = False
                continue
            if not line.strip():
                continue
            try:
                record = loads(line)
            except BadJson:
                continue
            out.extend(safe_feed(self._parser, record))
        return out


class SnapshotTail(_Tail):
    """Tail a store that rewrites one JSON document; ``split`` lists its records in order."""

    def __init__(
        self,
        locate: Callable[[], Path | None],
        make_parser: Callable[[], RecordParser],
        split: Callable[[Any], Iterable[Any]],
        **kwargs: Any,
    ) -> None:
        super().__init__(locate, make_parser, **kwargs)
        self._split = split
        self._parser = make_parser()
        self._seen = 0
        self._stamp: tuple[int, int, int] | None = None

    def _poll(self) -> list[Event]:
        path = self._locate()
        if path is None:
            return []
        try:
            st = os.stat(path)
            stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
            if stamp == self._stamp or st.st_size > SNAPSHOT_LIMIT:
                return []
            data = Path(path).read_bytes()
        except OSError:
            return []
        self._stamp = stamp
        try:
            doc = loads(data)
        except BadJson:
            return []  # caught mid-write: the next change re-reads it
        try:
            items = list(self._split(doc))
        except Exception:
            return []
        if len(items) < self._seen:  # rewritten shorter: a new history
            self.resets += 1
            self._seen, self._parser = 0, self._make_parser()
        out: list[Event] = []
        for item in items[self._seen :]:
            out.extend(safe_feed(self._parser, item))
        self._seen = len(items)
        return out


class PollTail(_Tail):
    """Tail a store that is a database: ``fetch()`` returns the records new or changed since its
    last call (it keeps its own cursor), fed in order to one parser."""

    def __init__(
        self,
        fetch: Callable[[], list[Any]],
        make_parser: Callable[[], RecordParser],
        **kwargs: Any,
    ) -> None:
        super().__init__(lambda: None, make_parser, **kwargs)
        self._fetch = fetch
        self._parser = make_parser()

    def _poll(self) -> list[Event]:
        try:
            batch = self._fetch()
        except Exception:  # a locked or half-written database: try again later
            return []
        out: list[Event] = []
        for record in batch:
            out.extend(safe_feed(self._parser, record))
        return out
