"""The ASGI response that plays a planned reply: hold, paced frames, mid-stream disconnect.

Starlette's ``StreamingResponse`` starts the response before the body and cannot hold *before* the
status line or hang up on purpose, so the reply is sent with raw ASGI messages here. Every wait races
the client's disconnect (an ``http.disconnect`` from ``receive``), so a cancelled client never leaves
a sleeping handler behind.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Literal

import msgspec
from starlette.types import Message, Receive, Scope, Send

from ._scenario import HoldSpec

Outcome = Literal["complete", "client-disconnected", "server-disconnected"]
"""How a reply ended: fully sent, the client went away, or the scenario hung up on purpose."""


class Frame(msgspec.Struct, frozen=True):
    data: bytes
    delay: float = 0.0
    """Seconds to wait before sending this frame."""


class HoldRegistry:
    """Lets a test end holds (``release``); lives on the server's loop.

    A reply remembers the release epoch when it is planned; ``release`` ends every hold planned
    before it, even one whose handler has not started waiting yet (no lost wake-ups).
    """

    def __init__(self) -> None:
        self.epoch = 0
        self._event: asyncio.Event | None = None

    def released_since(self, epoch: int) -> bool:
        return self.epoch > epoch

    async def wait_release(self, epoch: int) -> None:
        while not self.released_since(epoch):
            if self._event is None:
                self._event = asyncio.Event()
            await self._event.wait()

    def release(self) -> None:
        self.epoch += 1
        event, self._event = self._event, None
        if event is not None:
            event.set()


class PlannedResponse:
    def __init__(
        self,
        status: int,
        headers: dict[str, str],
        frames: list[Frame],
        *,
        hold: HoldSpec | None,
        disconnect_after: int | None,
        holds: HoldRegistry,
        on_done: Callable[[Outcome], None],
        on_frame: Callable[[int], None] | None = None,
    ) -> None:
        self.epoch = holds.epoch
        self.status = status
        self.headers = headers
        self.frames = frames
        self.hold = hold
        self.disconnect_after = disconnect_after
        self.holds = holds
        self.on_done = on_done
        self.on_frame = on_frame

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        disconnected = asyncio.Event()

        async def watch() -> None:
            while True:
                message: Message = await receive()
                if message["type"] == "http.disconnect":
                    disconnected.set()
                    return

        watcher = asyncio.create_task(watch())
        outcome: Outcome = "client-disconnected"
        self._reported = False
        try:
            outcome = await self._play(send, disconnected)
        finally:
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
            self._report(outcome)

    def _report(self, outcome: Outcome) -> None:
        if not self._reported:
            self._reported = True
            self.on_done(outcome)

    async def _play(self, send: Send, disconnected: asyncio.Event) -> Outcome:
        if (
            self.hold is not None
            and self.hold.after_chunks is None
            and not await self._wait(self.hold.seconds, disconnected, releasable=True)
        ):
            return "client-disconnected"
        raw_headers = [(k.lower().encode(), v.encode()) for k, v in self.headers.items()]
        await send({"type": "http.response.start", "status": self.status, "headers": raw_headers})
        for index, frame in enumerate(self.frames):
            if (
                self.hold is not None
                and self.hold.after_chunks == index
                and not await self._wait(self.hold.seconds, disconnected, releasable=True)
            ):
                return "client-disconnected"
            if self.disconnect_after is not None and index >= self.disconnect_after:
                # Returning without the final body message makes uvicorn close the socket.
                return "server-disconnected"
            if frame.delay > 0 and not await self._wait(frame.delay, disconnected):
                return "client-disconnected"
            if disconnected.is_set():
                return "client-disconnected"
            # The log is updated before the bytes go out, so a client holding a frame (or, after
            # the last one, the whole reply) never finds the record lagging behind.
            if self.on_frame is not None:
                self.on_frame(index + 1)
            if index == len(self.frames) - 1:
                self._report("complete")
            await send({"type": "http.response.body", "body": frame.data, "more_body": True})
        self._report("complete")
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        return "complete"

    async def _wait(
        self, seconds: float | None, disconnected: asyncio.Event, *, releasable: bool = False
    ) -> bool:
        """Wait ``seconds`` (forever when None); False when the client disconnected meanwhile."""
        waiters: list[asyncio.Task[Any]] = [asyncio.create_task(disconnected.wait())]
        if releasable:
            waiters.append(asyncio.create_task(self.holds.wait_release(self.epoch)))
        try:
            await asyncio.wait(waiters, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()
            await asyncio.gather(*waiters, return_exceptions=True)
        return not disconnected.is_set()
