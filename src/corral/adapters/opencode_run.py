"""OpenCode headless (agent id ``opencode-run``): one ``opencode run --format json`` per prompt.

The second OpenCode driver, beside the server driver ``opencode`` (``opencode serve`` + SSE), the
way ``codex-exec`` sits beside ``codex``: no server to boot and poll, no requests, no provider
look-up, no SIGTERM at the end — ``opencode run`` starts its own in-process server, prompts once,
prints what happens as JSON lines and exits (issue 20, docs/performance.md). A follow-up prompt
runs another process with ``--session SID`` (the id comes from the first line's ``sessionID``).

What it cannot do, and why (each shown on OpenCode 1.18.33, docs/protocols/opencode-run.md):

* **approvals / questions** — run has no stdin protocol; a permission rule that asks is answered
  ``reject`` by run itself, and run denies the question tool. So ``permission_mode`` is not an
  option here (refused by name); intents, whose rules only allow or deny, are enforced through
  ``OPENCODE_PERMISSION`` as on the server driver.
* **cancel** — run prints a text part only once it is finished, so nothing shows a turn under way
  before it is nearly over; ``interrupt()`` still ends the process group (the turn ends
  ``cancelled``), but the conformance cancel scenario cannot land mid-turn.
* **input during a turn** — no stdin: a prompt sent while a turn runs is refused.
* **effort** — ``--variant`` is ignored for a model without variants (the scripted model's
  requests do not change), so no run shows it: refused by name.
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
from ..intents import Intent
from ..intents import opencode as intent_rules
from ..protocols.opencode_run import OpenCodeRunParser
from ._codex_common import Attachments
from ._one_shot import ProcessPerPrompt
from ._opencode_run_launch import DEFAULT_BINARY, check_model, run_launch
from ._options import STANDARD_OPTIONS, LaunchArgs
from ._stores import store_hooks
from .base import Attachment, BaseAdapter

EXIT_WAIT = 10.0
"""Seconds ``opencode run`` gets to exit after its stdout closed, before it is killed."""


@store_hooks("_store_opencode")
class OpenCodeRunAdapter(ProcessPerPrompt, BaseAdapter):
    """OpenCode through ``opencode run --format json``: headless, one process per turn."""

    agent_id: ClassVar[str] = "opencode-run"
    display_name: ClassVar[str] = "OpenCode (run)"
    cli_binary: ClassVar[str | None] = "opencode"

    transport_factory: TransportFactory = DEFAULT_TRANSPORT
    """Builds the agent's line transport; a test plugs in :class:`corral.testing.Recording`."""

    cap_resume = True
    cap_image_input = True
    cap_thinking = True
    cap_subagents = True

    provides_models = False
    models_unavailable = "opencode run lists no models; the OpenCode server adapter lists them"
    efforts_unavailable = "opencode run ignores --variant for a model without variants"
    provides_usage = False

    enforceable_intents = frozenset(Intent)
    intent_renderer = intent_rules.render

    supported_options = STANDARD_OPTIONS - {"effort"}

    def __init__(self, *, tap: Tap | None = None, **launch: Unpack[LaunchArgs]) -> None:
        self.take_options(launch, binary_name=DEFAULT_BINARY)
        self.session_id = self.resume_session_id
        self.tap = tap
        self._events: asyncio.Queue[Event] = asyncio.Queue()
        self._transport: LineTransport | None = None
        self._pump: asyncio.Task[None] | None = None
        self._parser: OpenCodeRunParser | None = None
        self._cancelled = False
        self._ended = False
        self._attachments = Attachments()

    async def start(self, session_id: str) -> AgentInfo:
        info = self.make_agent_info(model=self.model, agent_session_id=self.session_id)
        self._emit(SessionStarted(agent=info, cwd=self.cwd))
        return info

    async def send(self, text: str, attachments: Sequence[Attachment] | None = None) -> None:
        await self._before_next_process()
        plan = run_launch(
            binary=self.binary,
            prompt=text,
            cwd=self.cwd,
            env={**os.environ, **self.env},
            extra_args=self.extra_args,
            session_id=self.session_id,
            model=self.model,
            files=[self._attachments.path_of(a) for a in attachments or ()],
        )
        transport = self.transport_factory(plan.argv, env=plan.env, cwd=plan.cwd, tap=self.tap)
        await transport.start()
        await transport.close_stdin()
        self._parser = OpenCodeRunParser()
        self._transport = transport
        self._cancelled = False
        self._pump = asyncio.create_task(self._run(transport), name="opencode-run-pump")

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
            known = parser.session_id
            events = parser.feed(obj)
            if parser.session_id and parser.session_id != known:
                self._learn_session(parser.session_id)
            for event in events:
                self._emit(event)
        try:
            code: int | None = await transport.wait(EXIT_WAIT)
        except TimeoutError:
            code = await transport.kill(1.0)
        if self._cancelled and not parser.turn_done:
            parser.turn_done = True
            self._emit(TurnCompleted(stop_reason=StopReason.CANCELLED))
        for event in parser.finish(code, transport.stderr_tail):
            self._emit(event)

    async def set_model(self, model: str) -> None:
        """The model of the next prompt's process (``provider/model``)."""
        self.model = check_model(model)

    def _learn_session(self, sid: str) -> None:
        if sid == self.session_id:
            return
        self.session_id = sid
        if self.on_session_id is not None:
            self.on_session_id(sid)

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
            "agent_session_id": self.session_id,
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


__all__ = ["OpenCodeRunAdapter"]
