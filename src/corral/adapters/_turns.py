"""Guards around a turn that every driver gets: prompt validation and the no-output watchdog.

* :func:`check_prompt` (in :mod:`._prompt`, light enough for ``corral run``'s early spawn) refuses a prompt before it reaches an agent: not a string, empty or only
  whitespace (with no attachment), a NUL character, a lone surrogate (not encodable as UTF-8), or
  longer than :data:`MAX_PROMPT_CHARS`. Some CLIs hang on such input (Qwen's stream-json waits
  forever on an empty prompt), so the refusal is an :class:`~corral.errors.InvalidPromptError`,
  raised by the adapter base (every ``send``) and by the session and run layers before that.
* :class:`TurnWatchdog` ends a turn whose agent stays silent: while a turn runs (a prompt was sent
  and no ``TurnCompleted`` came), if no event arrives for ``idle_timeout`` seconds it reports an
  ``Error(code="agent_unresponsive")`` and stops the turn — ``interrupt()`` (the escalation ladder
  of :func:`corral._process.end_turn`), then ``stop()`` if the turn still does not end. The clock
  pauses while an approval or question waits for a person.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..events import (
    ApprovalRequested,
    ApprovalResolved,
    ErrorEvent,
    Event,
    QuestionAnswered,
    QuestionAsked,
    SessionEnded,
    TextDelta,
    TurnCompleted,
)
from ._prompt import MAX_PROMPT_CHARS as MAX_PROMPT_CHARS
from ._prompt import check_prompt as check_prompt

if TYPE_CHECKING:
    from .base import BaseAdapter

DEFAULT_IDLE_TIMEOUT = 600.0
"""Seconds of silence in a running turn before the watchdog stops it (``0`` or ``None``: off)."""

UNRESPONSIVE = "agent_unresponsive"


class TurnWatchdog:
    """One session's no-output watchdog; feed it every event, run :meth:`run` beside the pump."""

    def __init__(
        self,
        adapter: BaseAdapter,
        idle_timeout: float | None,
        emit: Callable[[Event], object],
        *,
        stop_bound: float = 15.0,
    ) -> None:
        self.adapter = adapter
        self.idle_timeout = idle_timeout if idle_timeout and idle_timeout > 0 else None
        self.emit = emit
        self.stop_bound = stop_bound
        self.fired = 0
        self._armed = False
        self._waiting_on_user: set[str] = set()
        self._last = time.monotonic()
        self._done = False
        self._turn_over = asyncio.Event()
        self._wanted = asyncio.Event()
        """Set while a turn runs or the session ended: :meth:`run` ticks only then, so an idle
        session has no timer (500 idle sessions are not 500 wake-ups a second)."""

    def turn_started(self) -> None:
        self._armed = True
        self._turn_over.clear()
        self._last = time.monotonic()
        self._wanted.set()

    def disarm(self) -> None:
        """No turn runs after all (the prompt never went out)."""
        self._armed = False
        self._turn_over.set()
        self._wanted.clear()

    def saw(self, event: Event) -> None:
        self._last = time.monotonic()
        if type(event) is TextDelta:  # most of a turn's events: nothing else to note
            return
        if isinstance(event, ApprovalRequested | QuestionAsked):
            self._waiting_on_user.add(event.request_id)
        elif isinstance(event, ApprovalResolved | QuestionAnswered):
            self._waiting_on_user.discard(event.request_id)
        elif isinstance(event, TurnCompleted):
            self._armed = False
            self._waiting_on_user.clear()
            self._turn_over.set()
            self._wanted.clear()
        elif isinstance(event, SessionEnded):
            self._armed = False
            self._done = True
            self._turn_over.set()
            self._wanted.set()  # so run() sees it is done

    @property
    def silent_for(self) -> float:
        return time.monotonic() - self._last

    async def run(self) -> None:
        """Watch until the session ends (cancel the task to stop watching)."""
        if self.idle_timeout is None:
            return
        limit = self.idle_timeout
        while not self._done:
            if not self._wanted.is_set():
                await self._wanted.wait()
                continue
            await asyncio.sleep(min(1.0, limit / 4))
            if not self._armed or self._waiting_on_user:
                self._last = time.monotonic()
                continue
            if self.silent_for >= limit:
                await self._fire(limit)

    async def _fire(self, limit: float) -> None:
        self.fired += 1
        self.emit(
            ErrorEvent(
                message=f"the agent produced no output for {limit:g} s during a turn;"
                " corral is stopping the turn",
                code=UNRESPONSIVE,
            )
        )
        with contextlib.suppress(Exception):  # UnsupportedOperation included: then stop()
            await asyncio.wait_for(self.adapter.interrupt(), self.stop_bound)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._turn_over.wait(), 2.0)
        if self._armed and not self._done:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.adapter.stop(), self.stop_bound)
            self._done = True
        self._last = time.monotonic()
