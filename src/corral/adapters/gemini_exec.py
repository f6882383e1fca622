"""Gemini CLI headless: one ``gemini -p --output-format stream-json`` process per prompt,
``--resume SESSION`` after the first (the session id comes from the first ``init`` line).

A second Gemini driver beside the ACP one (``gemini``), for one-shot runs (decision 042): no ACP
handshake or session creation inside the CLI before the turn. What ``-p`` cannot do, as seen on
Gemini CLI 0.61.0:

* it never asks: ``--approval-mode default`` withholds every tool that would ask (the model is
  offered no ``write_file``, ``replace`` or ``run_shell_command``), ``auto_edit`` offers the edit
  tools, ``yolo`` every tool. So no approval capability, and of the intents only ``full``
  (``yolo``) is offered; the vendor's own words pass through ``vendor_permission_mode``
  (``default``, ``auto_edit``, ``yolo``, ``plan``);
* no stdin protocol (stdin is closed at once): nothing can be sent during a turn;
* it ignores SIGTERM sent to its first process (the CLI relaunches itself in a child), so
  ``interrupt()`` ends the whole process group; the turn then ends ``cancelled``.

Attachments are ``@path`` references in the prompt (Gemini's own syntax); a directory outside the
working directory that holds one is added with ``--include-directories`` (without it the CLI
silently skips the file).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Unpack

from .._process import DEFAULT_TRANSPORT, LineTransport, OverlongLine, Tap, TransportFactory
from .._process._decode import BadJson, loads
from ..errors import ConfigError
from ..events import AgentInfo, EndReason, Event, SessionStarted, UnknownEvent
from ..intents import Intent, Rendering, refusals
from ..protocols.gemini_stream_json import GeminiStreamParser
from ._gemini_exec_launch import APPROVAL_MODES as APPROVAL_MODES
from ._gemini_exec_launch import DEFAULT_BINARY, build_launch
from ._gemini_exec_launch import Launch as Launch
from ._one_shot import ProcessPerPrompt
from ._options import STANDARD_OPTIONS, LaunchArgs
from ._outbox import EventOutbox
from ._usage import UsageTotals
from .base import Attachment, BaseAdapter


def render_intent(intent: Intent, allowed_commands: Sequence[str], cwd: str) -> Rendering:
    """``full`` only: ``--approval-mode yolo``."""
    if intent is not Intent.FULL:
        raise ValueError(f"gemini -p cannot enforce {intent}")
    return Rendering(intent=intent, argv=("--approval-mode", "yolo"))


class GeminiExecAdapter(EventOutbox, ProcessPerPrompt, BaseAdapter):
    """Gemini CLI through ``gemini -p --output-format stream-json``: one process per turn."""

    agent_id: ClassVar[str] = "gemini-exec"
    display_name: ClassVar[str] = "Gemini CLI (-p)"
    cli_binary: ClassVar[str | None] = "gemini"
    kill_grace: ClassVar[float] = 1.0

    transport_factory: TransportFactory = DEFAULT_TRANSPORT
    """Builds the agent's line transport; a test plugs in :class:`corral.testing.Recording`."""

    cap_resume = True
    cap_image_input = True
    cap_cancel = True

    provides_models = False
    models_unavailable = (
        "gemini -p has no model listing; the Gemini ACP adapter (gemini) lists them"
    )
    efforts_unavailable = "Gemini CLI takes no effort setting"
    provides_usage = True

    enforceable_intents = frozenset({Intent.FULL})
    intent_renderer = render_intent
    intent_refusals = refusals(
        "gemini -p never asks and no request reaches corral's guard: its default mode withholds"
        " every tool that would ask (0.61.0 offered the model no write_file, replace or"
        " run_shell_command, so no read-only command either), auto_edit allows every edit, yolo"
        " every command; no mode holds this intent's grants (the ACP adapter, gemini, holds ask and review)",
        Intent.ASK,
        Intent.REVIEW,
        Intent.WORK,
        Intent.ACT_PR,
    )

    supported_options = (STANDARD_OPTIONS - {"effort"}) | {"vendor_permission_mode"}

    def __init__(self, *, tap: Tap | None = None, **launch: Unpack[LaunchArgs]) -> None:
        self.take_options(launch, binary_name=DEFAULT_BINARY)
        if self.permission_mode is not None and self.permission_mode not in APPROVAL_MODES:
            raise ConfigError(
                f"Gemini CLI has no approval mode {self.permission_mode!r} "
                f"(one of {', '.join(APPROVAL_MODES)})"
            )
        self.session_id = self.resume_session_id
        self.tap = tap
        self._queue: asyncio.Queue[Event] = asyncio.Queue()
        self._ended = False
        self._usage = UsageTotals()
        self._transport: LineTransport | None = None
        self._pump: asyncio.Task[None] | None = None
        self._parser: GeminiStreamParser | None = None
        self._cancelled = False
        self._tmp: Path | None = None
        self._count = 0

    async def start(self, session_id: str) -> AgentInfo:
        info = self.make_agent_info(model=self.model, agent_session_id=self.session_id)
        self._emit([SessionStarted(agent=info, cwd=self.cwd)])
        return info

    async def send(self, text: str, attachments: Sequence[Attachment] | None = None) -> None:
        await self._before_next_process()
        plan = build_launch(
            binary=self.binary,
            prompt=text,
            cwd=self.cwd,
            extra_args=self.extra_args,
            env=self.env,
            resume=self.session_id,
            model=self.model,
            approval_mode=self.permission_mode,
            files=[self._path_of(a) for a in attachments or ()],
        )
        transport = self.transport_factory(
            plan.argv, env={**os.environ, **plan.env}, cwd=self.cwd, tap=self.tap
        )
        await transport.start()
        await transport.close_stdin()  # -p appends stdin to the prompt: there is none
        self._parser = GeminiStreamParser()
        self._transport = transport
        self._cancelled = False
        self._pump = asyncio.create_task(self._run(transport), name="gemini-exec-pump")

    def _path_of(self, att: Attachment) -> str:
        if att.path is not None:
            return str(Path(att.path).resolve())
        if self._tmp is None:
            self._tmp = Path(tempfile.mkdtemp(prefix="corral-gemini-"))
        self._count += 1
        target = self._tmp / f"{self._count}-{Path(att.name or 'attachment').name}"
        target.write_bytes(att.read_bytes())
        return str(target)

    async def _run(self, transport: LineTransport) -> None:
        parser = self._parser
        assert parser is not None
        async for line in transport.lines():
            if isinstance(line, OverlongLine):
                self._emit([UnknownEvent(vendor_type="overlong-line", raw=repr(line))])
                continue
            if not line.strip():
                continue
            try:
                obj = loads(line)
            except BadJson:
                obj = None
            if not isinstance(obj, dict):
                text = line.decode(errors="replace")
                self._emit([UnknownEvent(vendor_type="non-json", raw=text)])
                continue
            known = parser.session_id
            events = parser.feed(obj)
            if parser.session_id and parser.session_id != known:
                self.session_id = parser.session_id
                if self.on_session_id is not None:
                    self.on_session_id(parser.session_id)
            self._emit(events)
        try:
            code: int | None = await transport.wait(10.0)
        except TimeoutError:
            code = await transport.kill(1.0)
        if self._cancelled:
            self._emit(parser.cancelled())
        self._emit(parser.finish(code, transport.stderr_tail))

    async def stop(self) -> None:
        if self._ended:
            return
        killed = await self._end_last_process()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
        self._end(EndReason.KILLED if killed else EndReason.COMPLETED, None, None)

    async def query_status(self) -> dict[str, Any]:
        return {
            **self._process_status(alive=not self._ended),
            "session_id": self.session_id,
            "model": self.model,
        }

    async def get_usage(self) -> UsageTotals:
        return self._usage.copy() if self._usage is not None else UsageTotals()
