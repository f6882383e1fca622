"""Drive an adapter through a scripted exchange, collecting its events (used by scenarios and tests).

Every wait has a deadline and fails with a message naming what it waited for and what it saw last;
nothing sleeps. Approval and question requests met while waiting are answered by a policy.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from ..adapters.base import Attachment, BaseAdapter
from ..events import (
    ApprovalDecision,
    ApprovalRequested,
    Event,
    QuestionAsked,
    SessionEnded,
    TurnCompleted,
)


class DriveTimeout(AssertionError):
    """A scenario waited too long for an event (an AssertionError, so tests report it plainly)."""


class Driver:
    """One adapter session under a script. ``events`` holds everything seen, in order."""

    def __init__(
        self,
        adapter: BaseAdapter,
        *,
        approve: ApprovalDecision | None = None,
        answer: Callable[[QuestionAsked], dict[str, str]] | None = None,
    ) -> None:
        self.adapter = adapter
        self.approve = approve
        self.answer = answer
        self.events: list[Event] = []
        self._stream: AsyncIterator[Event] | None = None
        self.ended = False

    async def start(self, session_id: str = "scenario") -> None:
        await self.adapter.start(session_id)
        self._stream = aiter(self.adapter.stream())

    async def prompt(self, text: str, attachments: Sequence[Attachment] | None = None) -> None:
        await self.adapter.send(text, attachments)

    async def next_event(self, timeout: float) -> Event:
        if self._stream is None:
            raise RuntimeError("Driver.start() first")
        if self.ended:
            raise DriveTimeout("the session already ended")
        try:
            event = await asyncio.wait_for(anext(self._stream), timeout)
        except StopAsyncIteration:
            self.ended = True
            raise DriveTimeout("the event stream ended") from None
        self.events.append(event)
        if isinstance(event, SessionEnded):
            self.ended = True
        await self._auto_answer(event)
        return event

    async def until(
        self, predicate: Callable[[Event], bool], *, timeout: float = 90.0, what: str = "event"
    ) -> Event:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            remaining = deadline - loop.time()
            try:
                if remaining <= 0:
                    raise TimeoutError
                event = await self.next_event(remaining)
            except (TimeoutError, DriveTimeout) as exc:
                seen = ", ".join(type(e).__name__ for e in self.events[-8:])
                raise DriveTimeout(f"no {what} within {timeout:g}s (last events: {seen})") from exc
            if predicate(event):
                return event

    async def turn(self, *, timeout: float = 120.0) -> TurnCompleted:
        event = await self.until(
            lambda e: isinstance(e, TurnCompleted), timeout=timeout, what="end of turn"
        )
        assert isinstance(event, TurnCompleted)
        return event

    async def finish(self, *, timeout: float = 30.0) -> SessionEnded:
        """Stop the adapter and read to the end of the stream."""
        await self.adapter.stop()
        if not self.ended:
            await self.until(
                lambda e: isinstance(e, SessionEnded), timeout=timeout, what="session end"
            )
        ended = [e for e in self.events if isinstance(e, SessionEnded)]
        return ended[-1]

    async def _auto_answer(self, event: Event) -> None:
        if isinstance(event, ApprovalRequested) and self.approve is not None:
            await self.adapter.respond_approval(event.request_id, self.approve)
        elif isinstance(event, QuestionAsked) and self.answer is not None:
            await self.adapter.answer_question(event.request_id, self.answer(event))

    def of_type(self, cls: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, cls)]
