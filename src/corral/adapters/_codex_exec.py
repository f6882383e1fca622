"""Codex headless: one ``codex exec --json`` process per prompt, ``exec resume THREAD`` after the
first (the thread id comes from the first ``thread.started``).

exec has no stdin protocol (stdin is closed at once — codex would otherwise wait on it) and never
asks for approval (its policy is fixed to ``never``; the sandbox still applies). ``interrupt()``
ends the running process group; the turn then ends ``cancelled``. ``cap_cancel``
stay False: exec prints an agent message only once it is complete, so nothing shows that a turn is
under way before it is nearly over, and the conformance cancel scenario races ``turn.completed``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Sequence
from typing import Any, ClassVar, Unpack

from .._process import DEFAULT_TRANSPORT, LineTransport, OverlongLine, Tap, TransportFactory
from .._process._decode import BadJson, loads
from ..events import (
    AgentInfo,
    EndReason,
    Event,
    SessionEnded,
    SessionStarted,
    StopReason,
    TurnCompleted,
    UnknownEvent,
)
from ..events._text import storable
from ..intents import Intent, refusals
from ..intents import codex as intent_rules
from ..protocols.codex_exec import ExecParser
from . import _codex_launch as launch
from ._codex_common import Attachments, native_argv_env
from ._codex_handoff import CodexTerminal
from ._one_shot import ProcessPerPrompt
from ._options import STANDARD_OPTIONS, LaunchArgs
from ._stores import store_hooks
from .base import Attachment, BaseAdapter


@store_hooks("_store_codex")
class CodexExecAdapter(CodexTerminal, ProcessPerPrompt, BaseAdapter):
    """Codex through ``codex exec --json``: headless, one process per turn."""

    agent_id: ClassVar[str] = "codex-exec"
    display_name: ClassVar[str] = "Codex (exec)"
    cli_binary: ClassVar[str | None] = "codex"
    # Hand-off (seed 003): Codex's terminal rules are shared (_codex_handoff.CodexTerminal).
    handoff_kind = "per-turn"

    transport_factory: TransportFactory = DEFAULT_TRANSPORT
    """Builds the agent's line transport; a test plugs in :class:`corral.testing.Recording`."""

    cap_resume = True
    cap_image_input = True

    provides_models = False
    models_unavailable = "codex exec has no model listing; the Codex app-server adapter lists them"
    efforts_unavailable = (
        "codex exec lists no efforts; the Codex app-server adapter lists them per model"
    )
    provides_usage = False

    enforceable_intents = intent_rules.EXEC_INTENTS
    intent_renderer = intent_rules.render_exec
    intent_refusals = refusals(
        "codex exec never asks, so its sandbox alone would decide: it cannot allow git commit yet forbid git push",
        Intent.WORK,
        Intent.ACT_PR,
    )

    supported_options = STANDARD_OPTIONS

    def __init__(
        self,
        *,
        sandbox: str | None = None,
        tap: Tap | None = None,
        **launch: Unpack[LaunchArgs],
    ) -> None:
        self.take_options(launch, binary_name="codex")
        self.thread_id = self.resume_session_id
        self.sandbox = sandbox
        self.tap = tap
        self._events: asyncio.Queue[Event] = asyncio.Queue()
        self._transport: LineTransport | None = None
        self._pump: asyncio.Task[None] | None = None
        self._parser: ExecParser | None = None
        self._cancelled = False
        self._ended = False
        self._attachments = Attachments()

    async def start(self, session_id: str) -> AgentInfo:
        info = self.make_agent_info(model=self.model, agent_session_id=self.thread_id)
        self._emit(SessionStarted(agent=info, cwd=self.cwd))
        return info

    async def send(self, text: str, attachments: Sequence[Attachment] | None = None) -> None:
        await self._before_next_process()
        images = [self._attachments.path_of(a) for a in attachments or () if a.is_image]
        others = [self._attachments.path_of(a) for a in attachments or () if not a.is_image]
        prompt = "\n".join([text, *(f"Attached file: {p}" for p in others)])
        plan = launch.exec_launch(
            binary=self.binary,
            prompt=prompt,
            extra_args=self.extra_args,
            env=self.env,
            resume_thread=self.thread_id,
            model=self.model,
            effort=self.effort,
            sandbox=self.sandbox,
            images=images,
        )
        argv, env = native_argv_env(plan.argv, {**os.environ, **plan.env})
        transport = self.transport_factory(argv, env=env, cwd=self.cwd, tap=self.tap)
        await transport.start()
        await transport.close_stdin()
        self._parser = ExecParser()
        self._transport = transport
        self._cancelled = False
        self._pump = asyncio.create_task(self._run(transport), name="codex-exec-pump")

    async def _run(self, transport: LineTransport) -> None:
        parser = self._parser
        assert parser is not None
        async for line in transport.lines():
            if isinstance(line, OverlongLine):
                self._emit(UnknownEvent(vendor_type="overlong-line", raw=repr(line)))
                continue
            if not line.strip():
                continue
            try:
                obj = loads(line)
            except BadJson:
                obj = None
            if not isinstance(obj, dict):
                self._emit(UnknownEvent(vendor_type="non-json", raw=line.decode(errors="replace")))
                continue
            known = parser.thread_id
            events = parser.feed(obj)
            if parser.thread_id and parser.thread_id != known:
                self.thread_id = parser.thread_id
                if self.on_session_id is not None:
                    self.on_session_id(parser.thread_id)
            for event in events:
                self._emit(event)
        try:
            code: int | None = await transport.wait(10.0)
        except TimeoutError:
            code = await transport.kill(1.0)
        if self._cancelled and not parser.turn_done:
            parser.turn_done = True
            self._emit(TurnCompleted(stop_reason=StopReason.CANCELLED))
        for event in parser.finish(code, transport.stderr_tail):
            self._emit(event)

    async def stop(self) -> None:
        if self._ended:
            return
        killed = await self._end_last_process()
        self._attachments.cleanup()
        self._emit(SessionEnded(reason=EndReason.KILLED if killed else EndReason.COMPLETED))
        self._ended = True

    async def query_status(self) -> dict[str, Any]:
        return {
            **self._process_status(alive=not self._ended),
            "thread_id": self.thread_id,
            "model": self.model,
        }

    async def stream(self) -> AsyncIterator[Event]:
        while True:
            event = await self._events.get()
            yield event
            if isinstance(event, SessionEnded):
                return

    def _emit(self, event: Event) -> None:
        if not self._ended:
            self._events.put_nowait(storable(event))
