"""The session manager: persistent sessions on the adapter contract, with a durable prompt queue.

One manager owns one SQLite database (sessions, transcripts, queue, drafts) and the live sessions of
this process. It must be used as an async context manager (or closed with :meth:`aclose`): entering
it runs :meth:`recover`, leaving it stops every live adapter (their sessions become
``disconnected``, resumable later).

Every event is stored as an :class:`~corral.events.Envelope` with a per-session monotonic ``seq``
(events of one loop iteration share one transaction: group commit, see
:mod:`corral.sessions._store`). Observers get an envelope when it is accepted, without waiting for
that commit, within a committed seq reservation, so no ``seq`` an observer saw is reused after a
crash (:mod:`corral.sessions._fanout`, decision 046). One process writes a session at a time (one writer, many observers): the
writer holds the session's OS lock (:mod:`corral.sessions._ownership`) for as long as it runs the
session, so a crashed owner whose pid was reused is still recognised as gone;
:meth:`SessionManager.take_over` is the explicit path for a session whose owner cannot be proven
dead by its lock.

Prompts are checked before they are stored (:func:`corral.adapters._turns.check_prompt`: an empty,
whitespace-only or unencodable prompt raises :class:`~corral.errors.InvalidPromptError`), and every
turn has a no-output watchdog (``idle_timeout``; see :mod:`corral.sessions._runner`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import msgspec

from .. import _db
from .._paths import directory_problem
from .._redact import redact, redact_event, redact_optional
from ..adapters._options import LaunchOptions
from ..adapters._turns import DEFAULT_IDLE_TIMEOUT, check_prompt
from ..adapters.base import Attachment, BaseAdapter, check_options, construct
from ..errors import ConfigError, SessionError, UnsupportedOperation
from ..events import (
    ApprovalDecision,
    EndReason,
    Envelope,
    Event,
    Sequencer,
    SessionEnded,
    SessionStarted,
    StatusChanged,
    encode,
)
from ..registry import launch_gate
from . import _launch_policy
from ._fanout import FanOut
from ._hub import Hub
from ._models import (
    LIVE_STATES,
    RESUMABLE_STATES,
    PromptRecord,
    SessionRecord,
    SessionSpec,
    SessionState,
    SessionStatus,
    ViewState,
)
from ._ownership import LockState, OwnerLocks, owner_alive
from ._queue import DEFAULT_QUEUE_LIMIT, PromptQueue
from ._resolve import AdapterResolver, Resolver
from ._resume_check import check_resume
from ._runner import SessionRunner
from ._store import SessionStore
from ._writer import DbWriter, Pending, Writer
from ._writer_process import ProcessDbWriter

CORRAL_SOURCE = "corral"
WRITERS = ("process", "thread")
"""Where a manager's database writes can run (``SessionManager(writer=...)``, decision 051)."""
START_TIMEOUT = 60.0


class SessionManager:
    def __init__(
        self,
        db_path: str | Path,
        *,
        resolver: Resolver | None = None,
        queue_limit: int = DEFAULT_QUEUE_LIMIT,
        start_timeout: float = START_TIMEOUT,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
        gate: Callable[[str], Awaitable[object]] = launch_gate,
        writer: str = "thread",
    ) -> None:
        # Every write goes to one writer that group-commits it off the event loop (decision
        # 035): a thread, or a process of its own (``writer="process"``, decision 051: the
        # SQLite work then has a GIL to itself). The two connections here only read. Queue
        # transitions are fsync'd (synchronous=FULL); the transcript and session rows use
        # NORMAL, which in WAL mode survives a crash of corral and risks only an OS crash.
        self._writer: Writer
        if writer == "thread":
            self._writer = DbWriter(db_path)
        elif writer == "process":
            self._writer = ProcessDbWriter(db_path)
        else:
            raise ValueError(f"writer must be one of {', '.join(WRITERS)}, not {writer!r}")
        self._queue_conn = _db.connect(db_path, synchronous="FULL")
        self._store_conn = _db.connect(db_path, synchronous="NORMAL")
        self.store = SessionStore(self._store_conn, on_stored=self._stored, writer=self._writer)
        self.queue = PromptQueue(self._queue_conn, limit=queue_limit, writer=self._writer)
        self.resolver: Resolver = resolver or AdapterResolver()
        self.start_timeout = start_timeout
        self.idle_timeout = idle_timeout
        self.gate = gate
        """Awaited with the adapter id before every launch (:func:`corral.registry.launch_gate`:
        a stale adapter re-verifies first, or the launch is refused)."""
        self.locks = OwnerLocks(db_path)
        self.hub = Hub()
        self.fanout = FanOut(self.hub.publish, self.store.reserve_seq_soon)
        self.history_write_failures = 0
        self._runners: dict[str, SessionRunner] = {}
        self._sequencers: dict[str, Sequencer] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._closed = False

    async def __aenter__(self) -> SessionManager:
        self.recover()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        for sid, runner in list(self._runners.items()):
            await runner.shutdown()
            self._runners.pop(sid, None)
            self.emit(sid, StatusChanged(status="disconnected", message="corral stopped"))
            self._set_state(sid, SessionState.DISCONNECTED)
            self.locks.release(sid)
        self.locks.release_all()
        # Everything emitted is stored and published; then the writer commits what is left
        # (the seq reservations are dropped last: every seq handed out is stored by then).
        await self.store.drain()
        with contextlib.suppress(sqlite3.Error):
            dropped = self.store.drop_seq_reservations(self.fanout.release())
            dropped.add_done_callback(self._count_failure)
        await asyncio.to_thread(self._writer.close)
        await asyncio.sleep(0)  # the last acks' bookkeeping callbacks
        self.store.flush()
        self.hub.close()
        self._queue_conn.close()
        self._store_conn.close()

    def recover(self) -> tuple[list[str], list[PromptRecord]]:
        """After a (re)start: sessions left live by a dead process become ``disconnected``, their
        ``sending`` prompts ``indeterminate`` (never replayed automatically). Returns both lists.
        Sessions another live corral process runs are left alone."""
        live = {s: pid for s, pid in self.store.live_owners().items() if s not in self._runners}
        sessions = [s for s, pid in live.items() if not owner_alive(self.locks, s, pid)]
        self.store.mark_disconnected(sessions)
        elsewhere = set(self.store.live_owners()) - set(self._runners)
        prompts = self.queue.recover(skip_sessions=elsewhere | set(self._runners))
        for sid in sessions:
            self.emit(sid, StatusChanged(status="disconnected", message="corral restarted"))
        for prompt in prompts:
            self._emit_prompt(prompt)
        return sessions, prompts

    def submit_write(self, operation: Callable[[sqlite3.Connection], Any]) -> Future[Any]:
        """Run ``operation`` in the manager's writer, in a transaction with the other writes of
        the moment (``synchronous=NORMAL``); the future resolves once committed. For other
        tables of the same database (the event board), so they never take SQLite's write lock
        on the event loop. With ``writer="process"`` the operation must pickle (an
        :class:`~corral._db.Op`); one that does not raises ``TypeError`` here."""
        return self._writer.submit(operation, durable=False)

    # ── events ──
    def emit(self, session_id: str, event: Event, *, source: str | None = None) -> Envelope:
        """Number, store and publish one event of ``session_id``."""
        seq = self._sequencers.get(session_id)
        if seq is None:
            start = self.store.seq_start(session_id)
            seq = Sequencer(session_id, CORRAL_SOURCE, start=start)
            self._sequencers[session_id] = seq
            self.fanout.start(session_id, start)
        envelope = seq.wrap(redact_event(event), source=source or CORRAL_SOURCE)
        data = encode(envelope)  # once, for the transcript's row and every observer's frame
        self.store.append_soon(envelope, data)
        # Published now when inside the session's committed seq reservation, else after its
        # group commit (decision 046).
        self.fanout.accept(envelope, data)
        return envelope

    def _stored(self, batch: list[Envelope], stored: bool) -> None:
        if not stored:
            self.history_write_failures += len(batch)
        self.fanout.stored(batch)

    def _emit_prompt(self, prompt: PromptRecord) -> None:
        self.emit(
            prompt.session_id,
            StatusChanged(
                status=f"prompt.{prompt.state}",
                message=prompt.id,
                raw={
                    "prompt_id": prompt.id,
                    "state": str(prompt.state),
                    "version": prompt.version,
                    "text": prompt.text,
                    "error": prompt.error,
                },
            ),
        )

    def events(self, session_id: str, *, after: int = 0) -> list[Envelope]:
        self.store.get(session_id)
        return self.store.events(session_id, after=after)

    def subscribe(
        self, session_id: str, *, after: int = 0, follow: bool = True
    ) -> AsyncIterator[Envelope]:
        """Stored envelopes after ``after``, then live ones; several observers may subscribe."""
        self.store.record(session_id)  # raises when unknown; no wait
        return self.hub.subscribe(
            session_id,
            after,
            lambda a: self.store.events(session_id, after=a),
            follow=follow,
        )

    def follow_frames(
        self,
        session_id: str,
        frame: Callable[[Envelope, bytes], bytes],
        *,
        after: int = 0,
        follow: bool = True,
        keepalive: float | None = None,
    ) -> AsyncIterator[list[bytes]]:
        """:meth:`subscribe` in encoded form, in batches (:meth:`Hub.follow_frames
        <corral.sessions._hub.Hub.follow_frames>`): each envelope is encoded once with ``frame``
        for all observers; an empty batch means ``keepalive`` seconds of silence."""
        self.store.record(session_id)  # raises when unknown; no wait
        return self.hub.follow_frames(
            session_id,
            after,
            lambda a: self.store.events(session_id, after=a),
            frame,
            follow=follow,
            keepalive=keepalive,
        )

    # ── sessions ──
    def list_sessions(self) -> list[SessionRecord]:
        return self.store.all()

    def get_session(self, session_id: str) -> SessionRecord:
        return self.store.get(session_id)

    async def create_session(self, spec: SessionSpec, *, start: bool = True) -> SessionRecord:
        # Unknown adapters, unenforceable intents and unsupported options fail before anything
        # is stored (sec: the directory is checked for a problem first); the options are
        # normalised once (an absolute, existing cwd).
        cls = self.resolver(spec.adapter_id)
        if spec.cwd is not None and (problem := directory_problem(spec.cwd)):
            raise ConfigError(problem)
        options = LaunchOptions.create(
            cwd=spec.cwd,
            model=spec.model,
            effort=spec.effort,
            intent=spec.intent,
            allowed_commands=spec.allowed_commands,
        )
        check_options(cls, options)
        # A given cwd is stored absolute; none stays none (the agent runs where corral runs).
        spec = msgspec.structs.replace(
            spec,
            cwd=options.cwd if spec.cwd is not None else None,
            intent=options.intent,
            allowed_commands=options.allowed_commands,
        )
        if start:
            await self.gate(spec.adapter_id)  # refused before anything is stored
        record = self.store.create(spec)
        if start:
            await self.start(record.id)
        return self.store.get(record.id)

    async def start(self, session_id: str, *, resume: bool = False) -> SessionRecord:
        async with self._lock(session_id):
            record = self.store.get(session_id)
            if session_id in self._runners:
                raise SessionError(f"session {session_id} is already running", session_id)
            self._check_writer(session_id)
            await self.gate(record.adapter_id)  # every launch: a stale profile re-verifies
            cls = self.resolver(record.adapter_id)
            if resume:  # a resume that never lies (docs/handoff.md#resume-safety)
                check_resume(
                    cls,
                    session_id=session_id,
                    agent_sid=record.agent_session_id,
                    cwd=record.cwd,
                    events=self.store.events(session_id),
                )
            self.locks.acquire(session_id)
            options = LaunchOptions.create(
                cwd=record.cwd,
                model=record.model,
                effort=record.effort,
                intent=record.intent,
                allowed_commands=record.allowed_commands,
                resume_session_id=record.agent_session_id if resume else None,
                on_session_id=lambda agent_sid: self.store.update(
                    session_id, agent_session_id=agent_sid
                ),
            )
            adapter = construct(cls, options)  # refuses before the state changes
            self.store.update(session_id, state=SessionState.STARTING, owner_pid=os.getpid())
            try:
                info = await asyncio.wait_for(adapter.start(session_id), self.start_timeout)
            except Exception as exc:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(adapter.stop(), 5)
                message = redact(f"{type(exc).__name__}: {exc}")
                self.emit(session_id, SessionEnded(reason=EndReason.FAILED, message=message))
                self.store.update(session_id, state=SessionState.FAILED, last_error=message)
                self.locks.release(session_id)
                raise SessionError(f"could not start session: {message}", session_id) from exc
            fields: dict[str, Any] = {
                "agent_info": msgspec.to_builtins(info),
                "last_error": None,
                "owner_pid": os.getpid(),
            }
            if info.agent_session_id:
                fields["agent_session_id"] = info.agent_session_id
            self.store.update(session_id, **fields)
            self.emit(session_id, SessionStarted(agent=info, cwd=record.cwd))
            runner = self._make_runner(session_id, adapter)
            self._runners[session_id] = runner
            self._set_state(session_id, SessionState.IDLE)
            runner.launch()
            return self.store.get(session_id)

    async def resume(self, session_id: str) -> SessionRecord:
        """Reconnect a failed/disconnected session; its pending queue goes on, in order."""
        record = self.store.get(session_id)
        if record.state not in RESUMABLE_STATES:
            raise SessionError(f"session {session_id} is {record.state}, not resumable", session_id)
        cls = self.resolver(record.adapter_id)
        if not cls.cap_resume:
            raise SessionError(f"{record.adapter_id} cannot resume a session", session_id)
        return await self.start(session_id, resume=True)

    async def release(self, session_id: str, *, message: str) -> SessionRecord:
        """Stop running an idle session without ending it: its agent process stops, the session
        becomes ``detached`` (observer detached) and later prompts wait in the queue. The
        hand-off's "continue in terminal" (:mod:`corral.sessions._handoff`)."""
        async with self._lock(session_id):
            runner = self._runners.get(session_id)
            if runner is not None:
                if await runner.in_turn():
                    raise SessionError(
                        f"session {session_id} is in a turn; stop it first", session_id
                    )
                self._runners.pop(session_id, None)
                await runner.shutdown()
                self.locks.release(session_id)
            else:
                self._check_writer(session_id)
            self._set_state(session_id, SessionState.DETACHED)
            self.emit(session_id, StatusChanged(status="observer-detached", message=message))
            return self.store.get(session_id)

    async def stop_turn(self, session_id: str) -> None:
        """Cancel the current turn; the session and its transcript stay."""
        await self._runner(session_id).interrupt()

    async def kill(self, session_id: str) -> SessionRecord:
        """Tear the session down on purpose: ``SessionEnded(reason=killed)``, queue canceled."""
        async with self._lock(session_id):
            record = self.store.get(session_id)
            self._check_writer(session_id)
            runner = self._runners.pop(session_id, None)
            if runner is None and record.state == SessionState.ENDED:
                return record
            if runner is not None:
                await runner.shutdown()
            self.emit(session_id, SessionEnded(reason=EndReason.KILLED, message="killed"))
            for prompt in self.queue.cancel_queued(session_id, "session killed"):
                self._emit_prompt(prompt)
            self._set_state(session_id, SessionState.ENDED)
            self.locks.release(session_id)
            return self.store.get(session_id)

    async def take_over(self, session_id: str) -> SessionRecord:
        """Claim a session whose recorded owner cannot be proven alive, explicitly.

        Refused while a live corral process holds the session's lock (that one really runs it).
        Otherwise the session becomes ``disconnected`` and its ``sending`` prompts
        ``indeterminate`` (never replayed), whatever process now has the recorded pid — the way
        out when a pid was reused and the session predates ownership locks. Resume, retry or kill
        it afterwards as usual.
        """
        async with self._lock(session_id):
            record = self.store.get(session_id)
            if session_id in self._runners:
                raise SessionError(f"session {session_id} is run by this process", session_id)
            if self.locks.state(session_id) is LockState.HELD:
                raise SessionError(
                    f"session {session_id} is run by a live corral process (it holds the lock)",
                    session_id,
                )
            if record.state in LIVE_STATES:
                self.store.mark_disconnected([session_id])
                self.emit(
                    session_id,
                    StatusChanged(status="disconnected", message="taken over from a dead owner"),
                )
            for prompt in self.queue.recover(only=session_id):
                self._emit_prompt(prompt)
            self.locks.forget(session_id)
            return self.store.get(session_id)

    async def status(self, session_id: str) -> SessionStatus:
        record = self.store.get(session_id)
        runner = self._runners.get(session_id)
        adapter_status: dict[str, Any] | None = None
        if runner is not None:
            try:
                adapter_status = await asyncio.wait_for(runner.adapter.query_status(), 10)
            except UnsupportedOperation:
                adapter_status = None
            except Exception as exc:
                adapter_status = {"error": f"{type(exc).__name__}: {exc}"}
        return SessionStatus(
            session=record,
            running=runner is not None,
            busy=bool(runner and (runner.busy or runner.claimed_a_prompt)),
            queue=self.queue.counts(session_id),
            pending_approvals=tuple(runner.pending_approvals) if runner else (),
            pending_questions=tuple(runner.pending_questions) if runner else (),
            adapter_status=adapter_status,
        )

    async def repair(self, session_id: str) -> dict[str, Any]:
        """Re-run the adapter's readiness check (for now its ``detect()``)."""
        record = self.store.get(session_id)
        cls = self.resolver(record.adapter_id)
        detected = await cls.detect()
        result = {"ok": detected is not None, "detected": msgspec.to_builtins(detected)}
        self.emit(
            session_id,
            StatusChanged(
                status="repair",
                message="ready" if detected else f"{record.adapter_id} not detected",
                raw=result,
            ),
        )
        return result

    # ── approvals and questions ──
    async def respond_approval(
        self,
        session_id: str,
        request_id: str,
        decision: ApprovalDecision,
        *,
        option_id: str | None = None,
        message: str | None = None,
    ) -> None:
        adapter = self._runner(session_id).adapter
        await adapter.respond_approval(request_id, decision, option_id=option_id, message=message)

    async def answer_question(
        self, session_id: str, request_id: str, answers: dict[str, str]
    ) -> None:
        adapter = self._runner(session_id).adapter
        await adapter.answer_question(request_id, answers)

    # ── the queue ──
    def send(
        self,
        session_id: str,
        text: str,
        *,
        attachments: Sequence[Attachment] = (),
        launch: Mapping[str, Any] | None = None,
    ) -> PromptRecord:
        """Queue a prompt; it is delivered in order, when no turn is running.

        An invalid prompt (empty, whitespace only…) raises
        :class:`~corral.errors.InvalidPromptError` and is not stored."""
        self._check_send(session_id, text, attachments, launch)
        prompt = self.queue.enqueue(session_id, text, attachments=attachments, launch=launch)
        self._emit_prompt(prompt)
        self._wake(session_id)
        return prompt

    async def asend(
        self,
        session_id: str,
        text: str,
        *,
        attachments: Sequence[Attachment] = (),
        launch: Mapping[str, Any] | None = None,
    ) -> PromptRecord:
        """:meth:`send` without blocking the event loop: returns once the prompt is durable (its
        commit is shared with the other queue transitions of the moment, decision 035)."""
        self._check_send(session_id, text, attachments, launch)
        prompt = await self.queue.aenqueue(session_id, text, attachments=attachments, launch=launch)
        self._emit_prompt(prompt)
        self._wake(session_id)
        return prompt

    def _check_send(
        self,
        session_id: str,
        text: str,
        attachments: Sequence[Attachment],
        launch: Mapping[str, Any] | None,
    ) -> None:
        check_prompt(text, attachments)
        if session_id in self._runners and not launch:
            # Running here: this process is its writer, and a runner is dropped before its
            # session is recorded ended; so no read of the record per prompt.
            return
        record = self.store.record(session_id)  # its last_seq is not needed: no wait for writes
        if record.state == SessionState.ENDED:
            raise SessionError(f"session {session_id} has ended", session_id)
        self._check_writer(session_id)
        if launch:
            cls = self.resolver(record.adapter_id)
            can_set_model = cls.set_model is not BaseAdapter.set_model
            _launch_policy.check(record, launch, can_set_model=can_set_model)

    def prompts(self, session_id: str) -> list[PromptRecord]:
        self.store.get(session_id)
        return self.queue.prompts(session_id)

    def edit_prompt(
        self, prompt_id: str, text: str, *, expected_version: int | None = None
    ) -> PromptRecord:
        check_prompt(text, self.queue.get(prompt_id).attachments)
        self._check_writer(self.queue.get(prompt_id).session_id)
        prompt = self.queue.edit(prompt_id, text, expected_version=expected_version)
        self._emit_prompt(prompt)
        return prompt

    def cancel_prompt(self, prompt_id: str) -> PromptRecord:
        self._check_writer(self.queue.get(prompt_id).session_id)
        prompt = self.queue.cancel(prompt_id)
        self._emit_prompt(prompt)
        return prompt

    def retry_prompt(self, prompt_id: str) -> PromptRecord:
        self._check_writer(self.queue.get(prompt_id).session_id)
        prompt = self.queue.retry(prompt_id)
        self._emit_prompt(prompt)
        self._wake(prompt.session_id)
        return prompt

    async def aedit_prompt(
        self, prompt_id: str, text: str, *, expected_version: int | None = None
    ) -> PromptRecord:
        """:meth:`edit_prompt` without blocking the event loop on its commit."""
        check_prompt(text, self.queue.get(prompt_id).attachments)
        self._check_writer(self.queue.get(prompt_id).session_id)
        prompt = await self.queue.aedit(prompt_id, text, expected_version=expected_version)
        self._emit_prompt(prompt)
        return prompt

    async def acancel_prompt(self, prompt_id: str) -> PromptRecord:
        """:meth:`cancel_prompt` without blocking the event loop on its commit."""
        self._check_writer(self.queue.get(prompt_id).session_id)
        prompt = await self.queue.acancel(prompt_id)
        self._emit_prompt(prompt)
        return prompt

    async def aretry_prompt(self, prompt_id: str) -> PromptRecord:
        """:meth:`retry_prompt` without blocking the event loop on its commit."""
        self._check_writer(self.queue.get(prompt_id).session_id)
        prompt = await self.queue.aretry(prompt_id)
        self._emit_prompt(prompt)
        self._wake(prompt.session_id)
        return prompt

    # ── drafts and view state ──
    def view(self, session_id: str) -> ViewState:
        return self.store.view(session_id)

    def save_view(self, session_id: str, view: ViewState) -> ViewState:
        return self.store.save_view(session_id, view)

    # ── internals ──
    def _check_writer(self, session_id: str) -> None:
        """One writer per session: refuse to touch a session another live corral process runs."""
        if session_id in self._runners:
            return
        owners = self.store.live_owners()
        owner = owners.get(session_id)
        if session_id in owners and owner_alive(self.locks, session_id, owner):
            raise SessionError(
                f"session {session_id} is run by corral process {owner}; use that process",
                session_id,
            )

    def is_running(self, session_id: str) -> bool:
        return session_id in self._runners

    async def wait_ended(self, session_id: str) -> None:
        runner = self._runners.get(session_id)
        if runner is not None:
            await runner.ended.wait()

    def _runner(self, session_id: str) -> SessionRunner:
        runner = self._runners.get(session_id)
        if runner is None:
            self.store.get(session_id)
            raise SessionError(f"session {session_id} is not running", session_id)
        return runner

    def _wake(self, session_id: str) -> None:
        runner = self._runners.get(session_id)
        if runner is not None:
            runner.wake()

    def _lock(self, session_id: str) -> asyncio.Lock:
        return self._locks.setdefault(session_id, asyncio.Lock())

    def _set_state(self, session_id: str, state: SessionState) -> None:
        """Record a state change without waiting for its commit (reads wait for it)."""
        try:
            future = self.store.update_soon(session_id, state=state)
        except sqlite3.Error:
            self.history_write_failures += 1
            return
        future.add_done_callback(self._count_failure)

    def _count_failure(self, future: Pending[None]) -> None:
        if not future.cancelled() and isinstance(future.exception(), sqlite3.Error):
            self.history_write_failures += 1

    def _make_runner(self, session_id: str, adapter: BaseAdapter) -> SessionRunner:
        def on_end(reason: EndReason, message: str | None) -> None:
            if self._runners.get(session_id) is runner:
                del self._runners[session_id]
            failed = reason == EndReason.FAILED
            state = SessionState.FAILED if failed else SessionState.ENDED
            last_error = redact_optional(message) if failed else None
            self.store.update(session_id, state=state, last_error=last_error)
            self.locks.release(session_id)

        def emit(event: Event) -> Envelope:
            return self.emit(session_id, event, source=adapter.agent_id)

        runner = SessionRunner(
            session_id=session_id,
            adapter=adapter,
            queue=self.queue,
            emit=emit,
            emit_prompt=self._emit_prompt,
            set_state=lambda state: self._set_state(session_id, state),
            on_end=on_end,
            idle_timeout=self.idle_timeout,
        )
        return runner


__all__ = ["LIVE_STATES", "SessionManager"]
