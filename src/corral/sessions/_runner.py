"""One live session: its adapter, the event pump and the prompt delivery loop.

The pump calls ``adapter.stream()`` and records every event; when an iterator is exhausted it calls
``stream()`` again, so both adapter styles work — one long-lived iterator for the whole session, or
one iterator per turn (seed 003's per-turn adapters). An iterator that ends without yielding
anything, or raises, means the session failed.

The delivery loop hands the next queued prompt to the adapter whenever no turn is running. Its
bookkeeping follows :mod:`corral.sessions._queue`: ``sending`` is committed before the hand-over,
``delivered`` at the ack point, and a hand-over cut short (kill, crash of the pump) becomes
``indeterminate``.

Under an intent, the pump checks every ``ApprovalRequested`` against it before anything else
(:mod:`corral.intents`): a forbidden request is denied by corral at once and recorded as a
``warning`` (code ``intent_denied``), never as an approval card; a granted one becomes the usual
approval event for a person to answer. At delivery, a prompt's launch policy is applied
(:mod:`corral.sessions._launch_policy`).

A no-output watchdog (:class:`corral.adapters._turns.TurnWatchdog`, ``idle_timeout`` seconds, off
when ``None``) runs beside them: a turn whose agent stays silent gets an
``Error(code="agent_unresponsive")`` and is stopped through the adapter's ``interrupt()`` — the
escalation ladder — then ``stop()``; the session never stays busy on a hung agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Callable
from concurrent.futures import Future

from ..adapters._options import guard_of
from ..adapters._turns import TurnWatchdog
from ..adapters.base import BaseAdapter
from ..events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    EndReason,
    Envelope,
    Event,
    QuestionAnswered,
    QuestionAsked,
    SessionEnded,
    TurnCompleted,
    WarningEvent,
)
from . import _launch_policy
from ._models import PromptRecord, SessionState
from ._queue import PromptQueue

STOP_TIMEOUT = 10.0
ACK_WAIT = 15.0
"""How long a turn's end waits for its prompt's ``delivered`` commit (> the busy timeout)."""
CLAIM_SETTLE_TIMEOUT = 15.0
"""How long a stopping session waits for a claim already being committed (> the busy timeout)."""

Emit = Callable[[Event], Envelope]
EmitPrompt = Callable[[PromptRecord], None]
SetState = Callable[[SessionState], None]
OnEnd = Callable[[EndReason, str | None], None]


class SessionRunner:
    def __init__(
        self,
        *,
        session_id: str,
        adapter: BaseAdapter,
        queue: PromptQueue,
        emit: Emit,
        emit_prompt: EmitPrompt,
        set_state: SetState,
        on_end: OnEnd,
        idle_timeout: float | None = None,
    ) -> None:
        self.session_id = session_id
        self.adapter = adapter
        self.queue = queue
        self._emit = emit
        self._emit_prompt = emit_prompt
        self._set_state = set_state
        self._on_end = on_end
        self.busy = False
        self.pending_approvals: dict[str, ApprovalRequested] = {}
        self.pending_questions: dict[str, QuestionAsked] = {}
        self.unrecorded_acks: list[str] = []
        self.ended = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._wake = asyncio.Event()
        self._acked: set[str] = set()
        self._recording: dict[str, asyncio.Future[PromptRecord]] = {}
        self._claiming: Future[PromptRecord | None] | None = None
        self._pump_task: asyncio.Task[None] | None = None
        self._deliver_task: asyncio.Task[None] | None = None
        self._guard = guard_of(adapter)
        self._denials: set[asyncio.Task[None]] = set()
        self.watchdog = TurnWatchdog(adapter, idle_timeout, self._emit)
        self._watch_task: asyncio.Task[None] | None = None

    # ── lifecycle ──
    def launch(self) -> None:
        self._pump_task = asyncio.create_task(self._pump(), name=f"corral-pump-{self.session_id}")
        self._deliver_task = asyncio.create_task(
            self._deliver(), name=f"corral-deliver-{self.session_id}"
        )
        self._watch_task = asyncio.create_task(
            self.watchdog.run(), name=f"corral-watchdog-{self.session_id}"
        )

    def wake(self) -> None:
        """Something was queued or retried: look at the queue again."""
        self._wake.set()

    async def interrupt(self) -> None:
        await self.adapter.interrupt()

    async def in_turn(self) -> bool:
        """Whether a turn is under way or about to begin: busy, waiting on a person, or a claim
        being committed that takes a prompt. The claim records the session busy in the store
        before this runner hears of it, so a claim in flight is waited for (bounded) first; one
        that cannot be settled in time counts as a turn."""
        claiming = self._claiming
        if claiming is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(
                    asyncio.shield(asyncio.wrap_future(claiming)), CLAIM_SETTLE_TIMEOUT
                )
            if not claiming.done() or self.claimed_a_prompt:
                return True
        return self.busy or bool(self.pending_approvals) or bool(self.pending_questions)

    @property
    def claimed_a_prompt(self) -> bool:
        """A claim committed with a prompt that the delivery loop has not taken up yet (the
        store already says ``busy``; :attr:`busy` is set when the loop resumes)."""
        claiming = self._claiming
        return (
            claiming is not None
            and claiming.done()
            and not claiming.cancelled()
            and claiming.exception() is None
            and claiming.result() is not None
        )

    async def shutdown(self) -> None:
        """Cancel the pump and the delivery loop, then stop the adapter (bounded by a timeout)."""
        for task in (self._watch_task, self._deliver_task, self._pump_task):
            if task is not None and task is not asyncio.current_task():
                task.cancel()
        for task in (self._watch_task, self._deliver_task, self._pump_task):
            if task is not None and task is not asyncio.current_task():
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        await self._stop_adapter()
        self.ended.set()

    async def _stop_adapter(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.adapter.stop(), STOP_TIMEOUT)

    # ── the event pump ──
    async def _pump(self) -> None:
        try:
            while True:
                got_any = False
                async for event in self.adapter.stream():
                    got_any = True
                    if isinstance(event, TurnCompleted) and self._recording:
                        # a turn's prompt is recorded delivered before its end is shown
                        await asyncio.wait(list(self._recording.values()), timeout=ACK_WAIT)
                    self._handle(event)
                    if isinstance(event, SessionEnded):
                        await self._finish(event.reason, event.message, emitted=True)
                        return
                if not got_any:
                    break
            await self._finish(EndReason.FAILED, "the adapter's event stream ended", emitted=False)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            await self._finish(EndReason.FAILED, f"{type(exc).__name__}: {exc}", emitted=False)

    def _handle(self, event: Event) -> None:
        self.watchdog.saw(event)
        if isinstance(event, ApprovalRequested) and self._deny_by_intent(event):
            return
        self._emit(event)
        if isinstance(event, TurnCompleted):
            self.busy = False
            self._record_unrecorded_acks()
            self._set_state(SessionState.IDLE)
            self._idle.set()
        elif isinstance(event, ApprovalRequested):
            self.pending_approvals[event.request_id] = event
        elif isinstance(event, ApprovalResolved):
            self.pending_approvals.pop(event.request_id, None)
        elif isinstance(event, QuestionAsked):
            self.pending_questions[event.request_id] = event
        elif isinstance(event, QuestionAnswered):
            self.pending_questions.pop(event.request_id, None)

    def _deny_by_intent(self, event: ApprovalRequested) -> bool:
        """Deny ``event`` when the session's intent forbids it (then it is never a card)."""
        if self._guard is None:
            return False
        verdict = self._guard.check(event)
        if verdict.allowed:
            return False
        message = self._guard.denial_message(event, verdict)
        self._emit(WarningEvent(message=message, code="intent_denied"))
        task = asyncio.create_task(self._send_denial(event.request_id, message))
        self._denials.add(task)
        task.add_done_callback(self._denials.discard)
        return True

    async def _send_denial(self, request_id: str, message: str) -> None:
        try:
            await self.adapter.respond_approval(request_id, ApprovalDecision.DENY, message=message)
        except Exception as exc:
            self._emit(WarningEvent(message=f"could not deny {request_id}: {exc}"))

    async def _finish(self, reason: EndReason, message: str | None, *, emitted: bool) -> None:
        if self._watch_task is not None and self._watch_task is not asyncio.current_task():
            self._watch_task.cancel()
        if self._deliver_task is not None:
            self._deliver_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._deliver_task
        if not emitted:
            self._emit(SessionEnded(reason=reason, message=message))
        self.busy = False
        await self._stop_adapter()
        self._on_end(reason, message)
        self.ended.set()

    # ── delivery ──
    async def _deliver(self) -> None:
        while True:
            await self._idle.wait()
            self._wake.clear()  # before claiming, so a prompt queued meanwhile wakes us again
            prompt = await self._claim()
            if prompt is None:
                await self._wake.wait()
                continue
            self._idle.clear()
            self.busy = True  # the claim's own transaction recorded the session busy
            self._emit_prompt(prompt)
            self.watchdog.turn_started()
            await self._hand_over(prompt)

    async def _claim(self) -> PromptRecord | None:
        """Claim the next prompt; ``sending`` is durable before this returns (group commit)."""
        future = self.queue.claim_next_soon(self.session_id)  # reads of the store wait for it
        self._claiming = future
        try:
            return await asyncio.shield(asyncio.wrap_future(future))
        except asyncio.CancelledError:
            # Stopped while the claim was under way: a claim not yet run is withdrawn; one that
            # committed was never handed over, so it is settled like any cut-short hand-over.
            if not future.cancel():
                with contextlib.suppress(Exception):
                    claimed = future.result(timeout=CLAIM_SETTLE_TIMEOUT)
                    if claimed is not None:
                        self._settle(claimed.id, "the session stopped before the hand-over")
            raise
        finally:
            self._claiming = None

    async def _hand_over(self, prompt: PromptRecord) -> None:
        attachments = list(prompt.attachments) or None
        try:
            model = _launch_policy.model_to_apply(prompt.launch)
            if model is not None and model != getattr(self.adapter, "model", None):
                await self.adapter.set_model(model)
            await self.adapter.send_acknowledged(
                prompt.text, attachments, ack=lambda: self._ack(prompt.id)
            )
        except asyncio.CancelledError:
            if prompt.id not in self._acked:
                self._settle(prompt.id, "the hand-over was cut short (session stopped)")
            raise
        except Exception as exc:
            if prompt.id in self._acked:
                self._emit(WarningEvent(message=f"after accepting prompt {prompt.id}: {exc}"))
                return
            try:
                self._emit_prompt(self.queue.mark_failed(prompt.id, f"{type(exc).__name__}: {exc}"))
            except sqlite3.Error as db_exc:
                self._emit(
                    WarningEvent(message=f"could not record failure of {prompt.id}: {db_exc}")
                )
            self.busy = False
            self.watchdog.disarm()
            self._set_state(SessionState.IDLE)
            self._idle.set()
            return
        self._ack(prompt.id)

    def _ack(self, prompt_id: str) -> None:
        """The ack hook. Idempotent; a failing history write never causes a resend.

        ``delivered`` is submitted at once and announced when its commit is durable; the hook does
        not wait for the fsync (a crash before it leaves the prompt ``indeterminate``)."""
        if prompt_id in self._acked:
            return
        self._acked.add(prompt_id)
        self._record_ack(prompt_id, first=True)

    def _record_ack(self, prompt_id: str, *, first: bool) -> None:
        if prompt_id in self._recording:
            return
        try:
            future = self.queue.mark_delivered_soon(prompt_id)
        except sqlite3.Error as exc:
            self._ack_not_recorded(prompt_id, exc, first=first)
            return
        self._recording[prompt_id] = future
        future.add_done_callback(lambda f: self._ack_done(prompt_id, f, first=first))

    def _ack_done(
        self, prompt_id: str, future: asyncio.Future[PromptRecord], *, first: bool
    ) -> None:
        self._recording.pop(prompt_id, None)
        if future.cancelled():
            return
        exc = future.exception()
        if exc is None:
            if prompt_id in self.unrecorded_acks:
                self.unrecorded_acks.remove(prompt_id)
            self._emit_prompt(future.result())
        elif isinstance(exc, sqlite3.Error):
            self._ack_not_recorded(prompt_id, exc, first=first)
        else:
            self._emit(WarningEvent(message=f"could not record the ack of {prompt_id}: {exc}"))

    def _ack_not_recorded(self, prompt_id: str, exc: sqlite3.Error, *, first: bool) -> None:
        if prompt_id not in self.unrecorded_acks:
            self.unrecorded_acks.append(prompt_id)
        if not first:
            return
        self._emit(
            WarningEvent(
                code="history_write_failed",
                message=f"prompt {prompt_id} was accepted but recording it failed ({exc});"
                " it will not be sent again",
            )
        )
        if not self.busy:  # the turn already ended: retry the bookkeeping once now
            self._record_ack(prompt_id, first=False)

    def _record_unrecorded_acks(self) -> None:
        for prompt_id in list(self.unrecorded_acks):
            self._record_ack(prompt_id, first=False)

    def _settle(self, prompt_id: str, reason: str) -> None:
        with contextlib.suppress(sqlite3.Error):
            self._emit_prompt(self.queue.mark_indeterminate(prompt_id, reason))
