"""Request/response correlation: the one table of requests waiting for their answer.

Three drivers send requests and match answers by id — the JSON-RPC client (ACP, Codex app-server),
Claude Code's control channel (``control_request`` / ``control_response``) and Pi's RPC commands.
They differ in the wire format and in how an id looks; the bookkeeping is this:

* :meth:`Correlator.call` picks the next id, registers a future, sends (through the caller's
  function) and waits for the answer at most ``timeout`` seconds (:class:`RequestTimeout` after);
  the entry is removed however the wait ends;
* the reader settles an answer with :meth:`resolve` / :meth:`reject` (``False``: nobody waits for
  that id — a late or unknown answer the caller may report);
* :meth:`fail_all` fails every waiting request when the peer is gone.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Generic, TypeVar

from ..errors import RequestTimeout

K = TypeVar("K", bound=Hashable)


class Correlator(Generic[K]):
    """Pending requests by id. ``make_id(n)`` turns the n-th request (from 1) into its id."""

    def __init__(self, make_id: Callable[[int], K]) -> None:
        self._make_id = make_id
        self._counter = itertools.count(1)
        self._pending: dict[K, asyncio.Future[Any]] = {}

    def __contains__(self, key: object) -> bool:
        return key in self._pending

    def __len__(self) -> int:
        return len(self._pending)

    async def call(self, send: Callable[[K], Awaitable[None]], *, timeout: float, what: str) -> Any:
        """Send request ``what`` with a fresh id and return its answer."""
        key = self._make_id(next(self._counter))
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            await send(key)
            try:
                return await asyncio.wait_for(asyncio.shield(future), timeout)
            except TimeoutError:
                raise RequestTimeout(what, timeout) from None
        finally:
            self._pending.pop(key, None)

    def resolve(self, key: Any, value: Any) -> bool:
        """Answer the request ``key``; ``False`` when no request waits under that id."""
        future = self._pending.get(key)
        if future is None or future.done():
            return False
        future.set_result(value)
        return True

    def reject(self, key: Any, exc: BaseException) -> bool:
        """Fail the request ``key`` with ``exc``; ``False`` when no request waits under that id."""
        future = self._pending.get(key)
        if future is None or future.done():
            return False
        future.set_exception(exc)
        return True

    def fail_all(self, exc: BaseException) -> None:
        """Fail every waiting request (the peer is gone)."""
        for future in self._pending.values():
            if not future.done():
                future.set_exception(exc)
                future.exception()  # mark retrieved: the awaiting side may be gone already
