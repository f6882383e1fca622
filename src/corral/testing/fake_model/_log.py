"""The request log: every request the fake server saw, with helpers for test assertions.

The server appends from its own thread; tests read (and wait) from theirs, so the list is guarded by
a condition variable. ``wait_for`` lets a test block until a request arrives instead of sleeping.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec

from ._types import Message, WireApi

_SECRET_HEADERS = frozenset(
    {"authorization", "x-api-key", "x-goog-api-key", "api-key", "cookie", "proxy-authorization"}
)
_SECRET_QUERY = frozenset({"key", "api_key"})


class RequestRecord(msgspec.Struct, kw_only=True):
    """One request as the fake server saw it (secrets removed)."""

    index: int
    method: str
    path: str
    query: dict[str, str] = msgspec.field(default_factory=dict)
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    body: Any = None
    """The parsed JSON body, or the raw text when it was not JSON, or None."""
    wire_api: WireApi | None = None
    endpoint: str = ""
    """What the request was routed to (``messages``, ``responses``, ``models``, ``not-found`` …)."""
    model: str = ""
    stream: bool = False
    is_main: bool = False
    """A turn of the agent loop, counted in ``turn`` (see ``_plan.is_main_request``)."""
    turn: int | None = None
    tool_names: list[str] = msgspec.field(default_factory=list)
    tool_results: list[str] = msgspec.field(default_factory=list)
    last_is_tool_result: bool = False
    has_image: bool = False
    user_texts: list[str] = msgspec.field(default_factory=list)
    messages: list[Message] = msgspec.field(default_factory=list)
    """The normalized conversation: system / user / assistant / tool messages."""
    step: str | None = None
    """Which scenario step (or fallback) produced the reply."""
    status: int = 0
    outcome: str = "pending"
    frames_sent: int = 0
    """Body frames (SSE events) sent so far; lets a test cancel once a reply is under way."""
    """``complete``, ``client-disconnected``, ``server-disconnected`` (or ``pending``)."""
    time: float = 0.0

    @property
    def last_user_text(self) -> str:
        return self.user_texts[-1] if self.user_texts else ""

    def tool_result_containing(self, needle: str) -> bool:
        return any(needle in r for r in self.tool_results)


def redact_headers(headers: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.lower() not in _SECRET_HEADERS}


def redact_query(query: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in query.items() if k.lower() not in _SECRET_QUERY}


class RequestView:
    """A filtered, read-only list of records with the assertion helpers."""

    def __init__(self, records: list[RequestRecord]) -> None:
        self._records = records

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[RequestRecord]:
        return iter(self._records)

    def __getitem__(self, index: int) -> RequestRecord:
        return self._records[index]

    def __repr__(self) -> str:
        rows = ", ".join(f"{r.method} {r.path} [{r.step}]" for r in self._records)
        return f"<requests {len(self._records)}: {rows}>"

    def where(self, predicate: Callable[[RequestRecord], bool]) -> RequestView:
        return RequestView([r for r in self._records if predicate(r)])

    def main(self) -> RequestView:
        """Agent-loop turns: requests that advertised tools, or tool-less conversations under way."""
        return self.where(lambda r: r.is_main)

    def side(self) -> RequestView:
        """Model requests without tools (titles, JSON-schema and router calls)."""
        return self.where(lambda r: r.wire_api is not None and not r.is_main)

    def model_calls(self) -> RequestView:
        """Generation requests of any wire API (no probes, listings or 404s)."""
        return self.where(lambda r: r.step is not None)

    def api(self, wire_api: WireApi) -> RequestView:
        return self.where(lambda r: r.wire_api == wire_api)

    def path(self, pattern: str) -> RequestView:
        return self.where(lambda r: re.search(pattern, r.path) is not None)

    def not_found(self) -> RequestView:
        return self.where(lambda r: r.status == 404)

    def with_tool_result(self, containing: str | None = None) -> RequestView:
        if containing is None:
            return self.where(lambda r: bool(r.tool_results))
        return self.where(lambda r: r.tool_result_containing(containing))

    def any_image(self) -> bool:
        return any(r.has_image for r in self._records)

    def last(self) -> RequestRecord:
        if not self._records:
            raise AssertionError("no request was logged")
        return self._records[-1]

    def last_user_text(self) -> str:
        return self.last().last_user_text

    def conversation(self, index: int = -1) -> list[Message]:
        """The normalized conversation of one request (the last one by default)."""
        return self._records[index].messages


class RequestLog(RequestView):
    """The live log of a running server; a view over a growing, thread-safe list."""

    def __init__(self, jsonl: Path | None = None) -> None:
        super().__init__([])
        self._cond = threading.Condition()
        self._jsonl = jsonl

    def _snapshot(self) -> list[RequestRecord]:
        with self._cond:
            return list(self._records)

    def where(self, predicate: Callable[[RequestRecord], bool]) -> RequestView:
        return RequestView([r for r in self._snapshot() if predicate(r)])

    def __iter__(self) -> Iterator[RequestRecord]:
        return iter(self._snapshot())

    def next_index(self) -> int:
        with self._cond:
            return len(self._records)

    def append(self, record: RequestRecord) -> None:
        with self._cond:
            record.index = len(self._records)
            record.time = time.time()
            self._records.append(record)
            self._cond.notify_all()

    def progress(self, record: RequestRecord, frames_sent: int) -> None:
        with self._cond:
            record.frames_sent = frames_sent
            self._cond.notify_all()

    def finish(self, record: RequestRecord, outcome: str) -> None:
        """Mark a record done; only then is it written to the JSONL file."""
        with self._cond:
            record.outcome = outcome
            if self._jsonl is not None:
                with self._jsonl.open("ab") as handle:
                    handle.write(msgspec.json.encode(record) + b"\n")
            self._cond.notify_all()

    def clear(self) -> None:
        with self._cond:
            self._records.clear()

    async def await_for(
        self,
        predicate: Callable[[RequestView], bool] | int,
        timeout: float = 10.0,
    ) -> RequestView:
        """``wait_for`` for async tests: waits on a worker thread, never blocking the loop."""
        return await asyncio.to_thread(self.wait_for, predicate, timeout)

    def wait_for(
        self,
        predicate: Callable[[RequestView], bool] | int,
        timeout: float = 10.0,
    ) -> RequestView:
        """Block until ``predicate(log)`` holds (or the log has N records); TimeoutError otherwise.

        A predicate raising AssertionError or IndexError (``log.last()`` on an empty log) counts
        as "not yet".
        """
        check: Callable[[RequestView], bool] = (
            (lambda view: len(view) >= predicate) if isinstance(predicate, int) else predicate
        )
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                view = RequestView(list(self._records))
                try:
                    if check(view):
                        return view
                except (AssertionError, IndexError):
                    pass  # e.g. ``log.last()`` before the first request: not yet
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"fake model: condition not met within {timeout}s: {view!r}")
                self._cond.wait(remaining)
