"""Posting board events from a process that is not the board (``corral job``), never in its way.

Events go to a bounded queue drained by one daemon thread that POSTs each with a short timeout.
At-most-once: a full queue drops the event, and the first failed POST marks the board down, after
which every event is dropped and counted (no retry storm against a board that is not there).
:meth:`close` waits a bounded time for the queue to drain.
"""

from __future__ import annotations

import json
import queue
import threading
import urllib.request
from typing import Any

from ..events.board import BoardEvent

TIMEOUT = 0.5
QUEUE = 1000


class BoardPoster:
    def __init__(self, url: str, token: str | None, *, timeout: float = TIMEOUT) -> None:
        self.url = url.rstrip("/") + "/api/events"
        self.headers = {"Content-Type": "application/json"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self.timeout = timeout
        self.sent = 0
        self.dropped = 0
        self.down = False
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue(QUEUE)
        self._thread = threading.Thread(target=self._run, name="board-poster", daemon=True)
        self._thread.start()

    def post(self, event: BoardEvent | dict[str, Any]) -> None:
        if self.down:
            self.dropped += 1
            return
        body = event if isinstance(event, dict) else _builtins(event)
        try:
            self._queue.put_nowait(body)
        except queue.Full:
            self.dropped += 1

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            if self.down:
                self.dropped += 1
                continue
            request = urllib.request.Request(
                self.url, data=json.dumps(item).encode(), headers=self.headers, method="POST"
            )
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    response.read()
                self.sent += 1
            except Exception:  # the board is down or refused: stop trying
                self.down = True
                self.dropped += 1

    def close(self, wait: float = 2.0) -> None:
        try:
            self._queue.put(None, timeout=wait)
        except queue.Full:
            return
        self._thread.join(wait)


def _builtins(event: BoardEvent) -> dict[str, Any]:
    import msgspec

    value: dict[str, Any] = msgspec.to_builtins(event)
    return value
