"""Seed 003's hand-off flow: a corral session bound to a vendor session a terminal may drive.

One writer, many observers. :class:`HandoffFlow` sits beside a :class:`SessionManager` and keeps,
per linked session, a watcher that polls the adapter's ``is_cwd_externally_owned`` hook
(every ``poll`` seconds, each call bounded by ``owner_timeout``):

* **a terminal holds it** → the corral session is ``detached`` ("observer detached"): no agent
  process of corral runs, prompts sent meanwhile wait in the durable queue, and the vendor's
  transcript is mirrored read-only into the session's events (``source="terminal"``);
* **the terminal is gone** (after one was seen, or when a prompt is waiting) → corral takes
  over: it re-resolves the lineage head (``latest_sid_for_cwd``; a new id is adopted only if its
  transcript holds the last turn corral saw, so a neighbour's conversation is never taken), then
  resumes the session through the resume check (:mod:`corral.sessions._resume_check`) and the
  queue is delivered in order, exactly once (the queue's own guarantees);
* **a terminal opens it while corral runs it idle** → corral releases it and mirrors again (a
  busy turn is never cut: it is warned about once and released when the turn ends);
* :meth:`HandoffFlow.continue_in_terminal` releases an idle live session on request
  (:meth:`SessionManager.release`: the agent process stops, per-turn or persistent alike) and
  returns the terminal's resume command; the session drops back to mirroring.

Links live in the ``handoff_links`` table, so a restarted service picks the watchers up again; the
mirror skips the events it already showed (``mirrored``). When corral itself wrote turns, the
next mirror first reads the transcript silently up to its end (quiet for ``catch_up_quiet``,
bounded by ``catch_up_limit``) and shows only what comes after.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Mapping
from typing import Any, Literal

import msgspec

from .._db import to_db_time, transaction, utcnow
from ..adapters._handoff import HandoffHooks, TranscriptMirror
from ..errors import ConfigError, ResumeRefused, SessionError, UnsupportedOperation
from ..events import (
    ApprovalRequested,
    ErrorEvent,
    Event,
    QuestionAsked,
    SessionEnded,
    SessionStarted,
    StatusChanged,
    WarningEvent,
)
from ._manager import SessionManager
from ._models import SessionRecord, SessionSpec, SessionState
from ._resume_check import find_vendor_session, last_seen_turn, store_env, transcript_contains

log = logging.getLogger(__name__)

Mode = Literal["terminal", "corral", "refused"]
MIRROR_SOURCE = "terminal"
STOP_WAIT = 5.0
_NOT_MIRRORED = (SessionStarted, SessionEnded, ApprovalRequested, QuestionAsked)


class Link(msgspec.Struct, frozen=True, kw_only=True):
    session_id: str
    adapter_id: str
    external_sid: str
    cwd: str
    mode: Mode
    mirrored: int = 0


class Release(msgspec.Struct, frozen=True, kw_only=True):
    """What "continue in terminal" hands back: run ``command`` in ``cwd``."""

    session: SessionRecord
    command: list[str]
    cwd: str


class HandoffFlow:
    def __init__(
        self,
        manager: SessionManager,
        *,
        poll: float = 0.5,
        owner_timeout: float = 10.0,
        catch_up_quiet: float = 0.5,
        catch_up_limit: float = 10.0,
    ) -> None:
        self.manager = manager
        self.poll = poll
        self.owner_timeout = owner_timeout
        self.catch_up_quiet = catch_up_quiet
        self.catch_up_limit = catch_up_limit
        self._conn = manager.store.conn
        self._watchers: dict[str, asyncio.Task[None]] = {}
        self._mirrors: dict[str, tuple[TranscriptMirror, asyncio.Task[None]]] = {}
        self._seen_terminal: dict[str, bool] = {}
        self._mirror_locks: dict[str, asyncio.Lock] = {}

    async def __aenter__(self) -> HandoffFlow:
        for link in self.links():
            if link.mode != "refused":
                self._watch(link.session_id)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        watchers = list(self._watchers.values())
        for task in watchers:
            task.cancel()
        if watchers:
            await asyncio.wait(watchers, timeout=STOP_WAIT)
        self._watchers.clear()
        for sid in list(self._mirrors):
            await self._stop_mirror(sid)

    # ── links ──
    def links(self) -> list[Link]:
        rows = self._conn.execute("SELECT * FROM handoff_links ORDER BY updated_at").fetchall()
        return [_link(row) for row in rows]

    def link_of(self, session_id: str) -> Link | None:
        row = self._conn.execute(
            "SELECT * FROM handoff_links WHERE session_id = ?", (session_id,)
        ).fetchone()
        return _link(row) if row else None

    def _put(self, link: Link) -> Link:
        with transaction(self._conn):
            self._conn.execute(
                """INSERT INTO handoff_links (session_id, adapter_id, external_sid, cwd, mode,
                   mirrored, updated_at) VALUES (?,?,?,?,?,?,?)
                   ON CONFLICT(session_id) DO UPDATE SET external_sid=excluded.external_sid,
                   mode=excluded.mode, mirrored=excluded.mirrored, updated_at=excluded.updated_at""",
                (
                    link.session_id,
                    link.adapter_id,
                    link.external_sid,
                    link.cwd,
                    link.mode,
                    link.mirrored,
                    to_db_time(utcnow()),
                ),
            )
        return link

    def _hooks(self, adapter_id: str) -> type[HandoffHooks]:
        cls = self.manager.resolver(adapter_id)
        if not cls.supports_handoff():
            raise UnsupportedOperation(adapter_id, "session hand-off")
        return cls

    async def link(self, adapter_id: str, external_sid: str, *, cwd: str | None = None) -> Link:
        """Bind a corral session to the vendor session ``external_sid`` (one per vendor session).

        The vendor's store must have it (and, with ``cwd``, in that directory). Linking the same
        vendor session again returns the existing link."""
        cls = self._hooks(adapter_id)
        for existing in self.links():
            if existing.adapter_id == adapter_id and existing.external_sid == external_sid:
                return existing
        entry = await asyncio.to_thread(find_vendor_session, cls, external_sid, env=store_env(cls))
        if entry is None:
            raise ConfigError(f"{adapter_id} has no stored session {external_sid}")
        where = entry.cwd or cwd
        if where is None:
            raise ConfigError(f"{adapter_id} session {external_sid} records no directory; give cwd")
        if cwd is not None and entry.cwd is not None and not _same(cwd, entry.cwd):
            raise ConfigError(f"{adapter_id} session {external_sid} belongs to {entry.cwd}")
        # An adapter that cannot tell whether a terminal holds it cannot be handed off.
        cls.is_cwd_externally_owned(where, external_sid, env=store_env(cls))
        record = await self.manager.create_session(
            SessionSpec(adapter_id=adapter_id, cwd=where), start=False
        )
        self.manager.store.update(
            record.id, agent_session_id=external_sid, state=SessionState.DETACHED
        )
        link = self._put(
            Link(
                session_id=record.id,
                adapter_id=adapter_id,
                external_sid=external_sid,
                cwd=where,
                mode="terminal",
            )
        )
        self.manager.emit(
            record.id,
            StatusChanged(
                status="observer-detached",
                message=f"linked to {adapter_id} session {external_sid}; mirroring it",
                raw={"external_sid": external_sid, "cwd": where},
            ),
        )
        self._watch(record.id)
        return link

    def resume_command(self, session_id: str) -> tuple[list[str], str]:
        record = self.manager.get_session(session_id)
        link = self.link_of(session_id)
        sid = link.external_sid if link else record.agent_session_id
        cwd = link.cwd if link else record.cwd
        if sid is None or cwd is None:
            raise SessionError(
                f"session {session_id} has no agent session id or directory to resume", session_id
            )
        cls = self._hooks(record.adapter_id)
        binary = getattr(cls, "terminal_binary", None)
        return cls.terminal_resume_command(sid, cwd=cwd, binary=binary), cwd

    async def continue_in_terminal(self, session_id: str) -> Release:
        """Release an idle live session to a terminal; return the command that resumes it."""
        record = self.manager.get_session(session_id)
        command, cwd = self.resume_command(session_id)
        link = self.link_of(session_id) or Link(
            session_id=session_id,
            adapter_id=record.adapter_id,
            external_sid=record.agent_session_id or "",
            cwd=cwd,
            mode="corral",
        )
        wrote = self.manager.is_running(session_id) or link.mode == "corral"
        if record.state != SessionState.DETACHED or self.manager.is_running(session_id):
            record = await self.manager.release(
                session_id, message="continued in a terminal: " + " ".join(command)
            )
        self._seen_terminal[session_id] = False
        self._put(msgspec.structs.replace(link, mode="terminal"))
        await self._start_mirror(session_id, catch_up=wrote)
        self._watch(session_id)
        return Release(session=record, command=command, cwd=cwd)

    def describe(self, session_id: str) -> dict[str, Any] | None:
        link = self.link_of(session_id)
        if link is None:
            return None
        data: dict[str, Any] = {"link": msgspec.to_builtins(link)}
        data["mirroring"] = session_id in self._mirrors
        with contextlib.suppress(Exception):
            data["resume_command"] = self.resume_command(session_id)[0]
        return data

    # ── the watcher ──
    def _watch(self, session_id: str) -> None:
        task = self._watchers.get(session_id)
        if task is not None and not task.done():
            return
        self._watchers[session_id] = asyncio.create_task(
            self._run(session_id), name=f"corral-handoff-{session_id}"
        )

    async def _run(self, session_id: str) -> None:
        state = {"warned_busy": False}
        while True:
            try:
                if not await self._step(session_id, state):
                    return
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # one bad poll never ends the watcher (nor the service)
                log.warning("hand-off watcher of %s: %s", session_id, exc)
            await asyncio.sleep(self.poll)

    async def _step(self, session_id: str, state: dict[str, bool]) -> bool:
        """One poll of the watcher; ``False`` when it has nothing left to watch."""
        link = self.link_of(session_id)
        if link is None or link.mode == "refused":
            return False
        cls = self._hooks(link.adapter_id)
        owned = await self._owned(cls, link)
        running = self.manager.is_running(session_id)
        if owned:
            self._seen_terminal[session_id] = True
        if running and owned:
            try:
                await self.manager.release(
                    session_id, message="a terminal opened this conversation; mirroring it"
                )
            except SessionError:
                if not state["warned_busy"]:
                    state["warned_busy"] = True
                    self.manager.emit(
                        session_id,
                        WarningEvent(
                            code="terminal_during_turn",
                            message="a terminal opened this conversation while corral's "
                            "turn runs; corral releases it when the turn ends",
                        ),
                    )
            else:
                state["warned_busy"] = False
                self._put(msgspec.structs.replace(link, mode="terminal"))
                await self._start_mirror(session_id, catch_up=True)
        elif not running and link.mode == "terminal":
            if owned or session_id not in self._mirrors:
                await self._start_mirror(session_id, catch_up=False)
            queued = self.manager.queue.counts(session_id).get("queued", 0)
            if not owned and (self._seen_terminal.get(session_id) or queued):
                await self._take_over(session_id, cls)
        return True

    async def _owned(self, cls: type[HandoffHooks], link: Link) -> bool:
        try:
            return await asyncio.wait_for(
                asyncio.to_thread(
                    cls.is_cwd_externally_owned, link.cwd, link.external_sid, env=store_env(cls)
                ),
                self.owner_timeout,
            )
        except Exception as exc:  # cannot tell: the safe side is "a terminal holds it"
            log.warning("ownership check of %s failed: %s", link.session_id, exc)
            return True

    async def _take_over(self, session_id: str, cls: type[HandoffHooks]) -> None:
        await self._stop_mirror(session_id)
        link = self.link_of(session_id)
        assert link is not None
        head = await self._head(cls, link)
        if head != link.external_sid:
            link = self._put(msgspec.structs.replace(link, external_sid=head, mirrored=0))
        self.manager.store.update(session_id, agent_session_id=head)
        self._put(msgspec.structs.replace(link, mode="corral"))
        self._seen_terminal[session_id] = False
        self.manager.emit(
            session_id, StatusChanged(status="observer-attached", message="the terminal is gone")
        )
        try:
            await self.manager.start(session_id, resume=True)
        except ResumeRefused as exc:
            self._put(msgspec.structs.replace(link, mode="refused"))
            self.manager.store.update(session_id, state=SessionState.FAILED, last_error=str(exc))
            self.manager.emit(session_id, ErrorEvent(code=exc.code, message=f"{exc}; {exc.offer}"))
        except SessionError as exc:  # the start failed (recorded by the manager as failed)
            log.warning("take-over of %s failed: %s", session_id, exc)
            self._put(msgspec.structs.replace(link, mode="refused"))

    async def _head(self, cls: type[HandoffHooks], link: Link) -> str:
        """The newest id of the lineage, if it is provably this conversation; else the known one."""
        env = store_env(cls)
        try:
            newest = await asyncio.wait_for(
                asyncio.to_thread(cls.latest_sid_for_cwd, link.cwd, env=env), self.owner_timeout
            )
        except (UnsupportedOperation, TimeoutError):
            return link.external_sid
        if not newest or newest == link.external_sid:
            return link.external_sid
        seen = last_seen_turn(self.manager.store.events(link.session_id))
        entry = await asyncio.to_thread(find_vendor_session, cls, newest, env=env)
        if entry is not None and seen is not None and transcript_contains(entry.path, seen):
            return newest
        self.manager.emit(
            link.session_id,
            WarningEvent(
                code="other_session_in_directory",
                message=f"the newest session in {link.cwd} ({newest}) is not this "
                f"conversation; corral keeps {link.external_sid}",
            ),
        )
        return link.external_sid

    # ── the mirror ──
    async def _start_mirror(self, session_id: str, *, catch_up: bool) -> None:
        async with self._mirror_locks.setdefault(session_id, asyncio.Lock()):
            if session_id not in self._mirrors:
                await self._open_mirror(session_id, catch_up=catch_up)

    async def _open_mirror(self, session_id: str, *, catch_up: bool) -> None:
        link = self.link_of(session_id)
        if link is None:
            return
        cls = self._hooks(link.adapter_id)
        try:
            mirror = cls.make_transcript_mirror(link.cwd, link.external_sid, env=store_env(cls))
        except UnsupportedOperation:
            return
        queue: asyncio.Queue[Event] = asyncio.Queue()

        async def read() -> None:
            async for event in mirror.events():
                await queue.put(event)

        reader = asyncio.create_task(read(), name=f"corral-mirror-read-{session_id}")
        count = 0
        if catch_up:  # corral wrote these turns itself: read to the end silently, then follow
            loop = asyncio.get_running_loop()
            deadline = loop.time() + self.catch_up_limit
            while loop.time() < deadline:
                try:
                    await asyncio.wait_for(queue.get(), self.catch_up_quiet)
                except TimeoutError:
                    break
                count += 1
            link = self._put(msgspec.structs.replace(link, mirrored=count))
        task = asyncio.create_task(
            self._pump_mirror(link, queue, reader, count=count, skip=link.mirrored),
            name=f"corral-mirror-{session_id}",
        )
        self._mirrors[session_id] = (mirror, task)

    async def _pump_mirror(
        self,
        link: Link,
        queue: asyncio.Queue[Event],
        reader: asyncio.Task[None],
        *,
        count: int,
        skip: int,
    ) -> None:
        try:
            while True:
                event = await queue.get()
                count += 1
                if count <= skip:
                    continue
                if not isinstance(event, _NOT_MIRRORED):
                    self.manager.emit(link.session_id, event, source=MIRROR_SOURCE)
                current = self.link_of(link.session_id)
                if current is not None:
                    self._put(msgspec.structs.replace(current, mirrored=count))
        finally:
            reader.cancel()
            await asyncio.wait([reader], timeout=STOP_WAIT)

    async def _stop_mirror(self, session_id: str) -> None:
        entry = self._mirrors.pop(session_id, None)
        if entry is None:
            return
        mirror, task = entry
        task.cancel()
        await asyncio.wait([task], timeout=STOP_WAIT)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(mirror.close(), STOP_WAIT)


def _same(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _link(row: Mapping[str, Any]) -> Link:
    return Link(
        session_id=row["session_id"],
        adapter_id=row["adapter_id"],
        external_sid=row["external_sid"],
        cwd=row["cwd"],
        mode=row["mode"],
        mirrored=int(row["mirrored"]),
    )


__all__ = ["HandoffFlow", "Link", "Release"]
