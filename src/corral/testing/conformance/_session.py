"""The one live driver of the test kit: start an adapter, send, collect turns and events, stop.

Used by the conformance scenarios, the recorders' scenarios and the real-CLI tests. Events are
pumped from :func:`corral.adapters.base.iter_events` into a queue by one task owned by the
:class:`LiveSession`; every wait has a deadline (a :class:`ScenarioFailure` naming what it waited
for and the last events seen), so a hung agent fails a scenario instead of hanging the suite.
Approval and question requests can be answered by a policy (``approve=``, ``answer=``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ...adapters.base import Attachment, BaseAdapter, iter_events
from ...events import (
    AgentInfo,
    ApprovalDecision,
    ApprovalRequested,
    Event,
    QuestionAsked,
    SessionEnded,
    StopReason,
    TextComplete,
    TextDelta,
    TurnCompleted,
)

E = TypeVar("E")


class ScenarioFailure(AssertionError):
    """A scenario's expectation did not hold."""


class Turn:
    """The events of one turn, in order, ending with ``TurnCompleted`` (or ``SessionEnded``)."""

    def __init__(self, events: list[tuple[float, Event]]) -> None:
        self.timed = events
        self.events = [e for _, e in events]

    def of(self, cls: type[E]) -> list[E]:
        return [e for e in self.events if isinstance(e, cls)]

    @property
    def end(self) -> TurnCompleted | None:
        ends = self.of(TurnCompleted)
        return ends[-1] if ends else None

    @property
    def text(self) -> str:
        """The assistant's final text: completed texts, else the concatenated deltas."""
        done = [e.text for e in self.of(TextComplete) if e.parent_call_id is None]
        if done:
            return "".join(done)
        return "".join(e.text for e in self.of(TextDelta) if e.parent_call_id is None)

    def time_of(self, cls: type[Any]) -> float | None:
        for t, e in self.timed:
            if isinstance(e, cls):
                return t
        return None

    def describe(self) -> str:
        return ", ".join(e.__struct_config__.tag for e in self.events)  # type: ignore[misc]


class LiveSession:
    """One started adapter with an event pump. Use as ``async with LiveSession(adapter) as s``
    (or :meth:`start` … :meth:`finish`)."""

    def __init__(
        self,
        adapter: BaseAdapter,
        session_id: str = "conformance",
        *,
        approve: ApprovalDecision | None = None,
        answer: Callable[[QuestionAsked], dict[str, str]] | None = None,
    ) -> None:
        self.adapter = adapter
        self.session_id = session_id
        self.approve = approve
        self.answer = answer
        self.info: AgentInfo | None = None
        self.all_events: list[Event] = []
        self._queue: asyncio.Queue[tuple[float, Event]] = asyncio.Queue()
        self._pump: asyncio.Task[None] | None = None
        self.ended: SessionEnded | None = None

    async def __aenter__(self) -> LiveSession:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> AgentInfo:
        self.info = await asyncio.wait_for(self.adapter.start(self.session_id), 90)
        self._pump = asyncio.create_task(self._run_pump())
        return self.info

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.adapter.stop(), 20)
        if self._pump is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError, Exception):
                await asyncio.wait_for(asyncio.shield(self._pump), 5)
            if not self._pump.done():
                self._pump.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await self._pump

    async def finish(self) -> SessionEnded:
        """Stop the adapter, read to the end of its stream, return how the session ended."""
        await self.close()
        if self.ended is None:
            raise ScenarioFailure("the session ended without a session.ended event")
        return self.ended

    async def _run_pump(self) -> None:
        async for event in iter_events(self.adapter):
            self.all_events.append(event)
            if isinstance(event, SessionEnded):
                self.ended = event
            await self._queue.put((time.monotonic(), event))
            if isinstance(event, ApprovalRequested) and self.approve is not None:
                await self.adapter.respond_approval(event.request_id, self.approve)
            elif isinstance(event, QuestionAsked) and self.answer is not None:
                await self.adapter.answer_question(event.request_id, self.answer(event))

    @property
    def events(self) -> list[Event]:
        """Every event so far, in order."""
        return self.all_events

    def of_type(self, cls: type[E]) -> list[E]:
        return [e for e in self.all_events if isinstance(e, cls)]

    async def send(self, text: str, attachments: Sequence[Attachment] | None = None) -> None:
        await asyncio.wait_for(self.adapter.send(text, attachments), 30)

    prompt = send

    async def next_event(self, timeout: float) -> tuple[float, Event]:
        try:
            return await asyncio.wait_for(self._queue.get(), timeout)
        except TimeoutError:
            raise ScenarioFailure(f"no event within {timeout:.0f} s") from None

    async def until(
        self, predicate: Callable[[Event], bool], *, timeout: float = 90.0, what: str = "event"
    ) -> Event:
        """Read events until one matches ``predicate``; fail after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            try:
                if remaining <= 0:
                    raise ScenarioFailure("deadline")
                _, event = await self.next_event(remaining)
            except ScenarioFailure:
                seen = ", ".join(type(e).__name__ for e in self.all_events[-8:])
                raise ScenarioFailure(
                    f"no {what} within {timeout:g}s (last events: {seen})"
                ) from None
            if predicate(event):
                return event

    async def turn(
        self,
        timeout: float = 60.0,
        on_event: Callable[[Event], object] | None = None,
    ) -> Turn:
        """Collect events until the turn ends; ``on_event`` may be a coroutine function."""
        deadline = time.monotonic() + timeout
        collected: list[tuple[float, Event]] = []
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ScenarioFailure(
                    f"turn did not end within {timeout:.0f} s; saw: " + Turn(collected).describe()
                )
            stamped = await self.next_event(remaining)
            collected.append(stamped)
            event = stamped[1]
            if on_event is not None:
                result = on_event(event)
                if asyncio.iscoroutine(result):
                    await result
            if isinstance(event, TurnCompleted | SessionEnded):
                return Turn(collected)


def expect(condition: object, message: str) -> None:
    """Fail the scenario with ``message`` unless ``condition`` holds."""
    if not condition:
        raise ScenarioFailure(message)


def turn_ok(turn_end: TurnCompleted | None, what: str) -> None:
    """Fail unless the turn ended normally (not the session, not cancelled, not an error)."""
    expect(turn_end is not None, f"{what}: the session ended instead of the turn")
    assert turn_end is not None
    expect(
        turn_end.stop_reason is StopReason.END_TURN,
        f"{what}: turn ended {turn_end.stop_reason.value} ({turn_end.error})",
    )
