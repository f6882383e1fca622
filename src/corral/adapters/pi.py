"""Pi over its RPC mode (agent id ``pi``): ``pi --mode rpc``, one JSON object per LF-ended line.

Commands carry an ``id``; the matching ``response`` resolves the caller's await. Events flow
through :class:`~corral.protocols.pi_rpc.PiRpcParser`. A message sent while a turn streams goes
out as ``prompt`` with ``streamingBehavior: "steer"`` (delivered after the current model round
trip, inside the same agent run); :meth:`PiAdapter.follow_up` queues one for after the run.
Pi has no approval system and no question tool: ``cap_permissions`` and ``cap_interact`` are off.

Resume: the session *file* (from ``get_state``) goes to ``on_session_id``; ``resume_session_id``
(a file path or a session id) becomes ``--session``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
from collections.abc import Sequence
from typing import Any, ClassVar, Unpack

from .._process import (
    DEFAULT_TRANSPORT,
    Correlator,
    LineTransport,
    OverlongLine,
    Tap,
    TransportFactory,
    TurnMark,
    end_turn,
)
from .._process._decode import BadJson, loads
from .._process._stop import CANCEL_WAIT
from ..errors import ProcessError, ProtocolError, SessionError
from ..events import (
    AgentInfo,
    EndReason,
    ErrorEvent,
    Event,
    SessionStarted,
)
from ..intents import Intent, refusals
from ..intents import unguarded as intent_rules
from ..protocols.pi_rpc import PiRpcParser
from ._handoff_terminal import TerminalHandoff
from ._model_info import ModelInfo, names_of
from ._options import STANDARD_OPTIONS, LaunchArgs
from ._outbox import EventOutbox
from ._pi_launch import DEFAULT_BINARY
from ._pi_launch import build_pi_argv as build_pi_argv
from ._stores import store_hooks
from ._usage import UsageTotals
from .base import Attachment, BaseAdapter

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")
COMMAND_TIMEOUT = 30.0
_DIALOGS = frozenset({"select", "confirm", "input", "editor"})


def image_payload(attachments: Sequence[Attachment]) -> list[dict[str, str]]:
    return [
        {
            "type": "image",
            "data": base64.b64encode(att.read_bytes()).decode(),
            "mimeType": att.media_type,
        }
        for att in attachments
        if att.is_image
    ]


@store_hooks("_store_pi")
class PiAdapter(TerminalHandoff, EventOutbox, BaseAdapter):
    agent_id = "pi"
    transport_factory: TransportFactory = DEFAULT_TRANSPORT
    """Builds the agent's line transport; a test plugs in :class:`corral.testing.Recording`."""
    display_name = "Pi"
    cli_binary = "pi"
    # Hand-off (seed 003; adapters/_handoff_terminal.py).
    handoff_kind = "persistent"
    handoff_processes = ("pi",)
    handoff_session_flags = ("--session", "--fork")
    handoff_resume_args = ("--session", "{sid}")
    cancel_wait: ClassVar[float] = CANCEL_WAIT
    """Seconds ``abort`` gets to end the run before corral signals pi."""

    cap_image_input = True
    cap_thinking = True
    cap_cancel = True
    cap_input_during_turn = True
    cap_resume = True

    provides_models = True
    efforts_unavailable = (
        "Pi's get_available_models says whether a model reasons, not its thinking levels"
    )
    provides_usage = True

    enforceable_intents = frozenset({Intent.FULL})
    intent_renderer = intent_rules.render
    intent_refusals = refusals(f"pi {intent_rules.REASON}")

    # No ``vendor_permission_mode``: pi runs every tool, so ``--permission-mode`` is refused.
    supported_options = STANDARD_OPTIONS

    def __init__(
        self,
        *,
        tap: Tap | None = None,
        base_env: dict[str, str] | None = None,
        **launch: Unpack[LaunchArgs],
    ) -> None:
        self.take_options(launch, binary_name=DEFAULT_BINARY)
        self.env = {**(os.environ if base_env is None else base_env), **self.env}
        self.tap = tap
        self.parser = PiRpcParser()
        self.transport: LineTransport | None = None
        self._queue: asyncio.Queue[Event] = asyncio.Queue()
        self._calls: Correlator[str] = Correlator(lambda n: f"corral-{n}")
        self._reader: asyncio.Task[None] | None = None
        self._agent_started = asyncio.Event()
        self._stopping = False
        self._turn_mark = TurnMark()
        self._ended = False
        self._usage = UsageTotals()

    # ── lifecycle ──
    async def start(self, session_id: str) -> AgentInfo:
        argv = build_pi_argv(
            binary=self.binary,
            model=self.model,
            effort=self.effort,
            resume=self.resume_session_id,
            extra_args=self.extra_args,
        )
        self.transport = self.transport_factory(argv, env=self.env, cwd=self.cwd, tap=self.tap)
        await self.transport.start()
        self._reader = asyncio.create_task(self._read(), name="pi-rpc-reader")
        try:
            state = await self.command({"type": "get_state"}, timeout=60)
        except BaseException:
            await self.transport.kill()
            raise
        ident = self._report_session(state)
        model = state.get("model") if isinstance(state.get("model"), dict) else {}
        assert isinstance(model, dict)
        info = self.make_agent_info(
            model=str(model.get("id") or self.model or "") or None, agent_session_id=ident
        )
        self._queue.put_nowait(SessionStarted(agent=info, cwd=self.cwd))
        return info

    def _report_session(self, state: dict[str, Any]) -> str | None:
        ident = state.get("sessionFile") or state.get("sessionId")
        if isinstance(ident, str) and ident and self.on_session_id is not None:
            self.on_session_id(ident)
        return ident if isinstance(ident, str) else None

    async def stop(self) -> None:
        if self._stopping or self.transport is None:
            return
        self._stopping = True
        await self.transport.close_stdin()
        try:
            code: int | None = await self.transport.wait(3.0)
        except TimeoutError:
            code = await self.transport.kill()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._reader, 3.0)
        self._end(EndReason.COMPLETED, code, None)

    # ── reading ──
    async def _read(self) -> None:
        assert self.transport is not None
        async for line in self.transport.lines():
            if isinstance(line, OverlongLine):
                self._emit([ErrorEvent(message=f"pi printed an overlong line ({line.size} bytes)")])
                continue
            try:
                obj = loads(line)
            except BadJson:
                self._emit(
                    [
                        ErrorEvent(
                            message="pi printed a line that is not JSON",
                            raw=line.decode("utf-8", "replace"),
                        )
                    ]
                )
                continue
            if not isinstance(obj, dict):
                continue
            line_id = obj.get("id")
            if obj.get("type") == "response" and type(line_id) is str:
                self._calls.resolve(line_id, obj)
            if obj.get("type") == "agent_start":
                self._agent_started.set()
            elif obj.get("type") == "agent_end":
                self._agent_started.clear()
            method = obj.get("method")
            if (
                obj.get("type") == "extension_ui_request"
                and type(method) is str
                and method in _DIALOGS
            ):
                # Nobody can answer an extension dialog here; cancel it rather than hang the turn.
                await self._write(
                    {"type": "extension_ui_response", "id": obj.get("id"), "cancelled": True}
                )
            try:
                events = self.parser.feed(obj)
            except Exception as exc:  # a parser bug must not stall the session
                events = [ErrorEvent(message=f"could not parse a pi line: {exc!r}", raw=obj)]
            self._emit(events)
        code = None
        with contextlib.suppress(Exception):
            code = await self.transport.wait(5.0)
        self._calls.fail_all(ProcessError("pi exited", code, self.transport.stderr_tail))
        self._emit(self.parser.finish())
        if self._stopping:
            self._end(EndReason.COMPLETED, code, None)
        else:
            self._end(EndReason.FAILED, code, self.transport.stderr_tail)

    # ── commands ──
    async def _write(self, command: dict[str, Any]) -> None:
        if self.transport is None:
            raise SessionError("pi is not running")
        self._emit(self.parser.feed_sent(command))
        await self.transport.write_line(json.dumps(command, ensure_ascii=False).encode())

    async def command(
        self, command: dict[str, Any], *, timeout: float = COMMAND_TIMEOUT
    ) -> dict[str, Any]:
        """Send one RPC command and return its ``data``; a failed response raises."""

        async def send(cid: str) -> None:
            await self._write({**command, "id": cid})

        response: dict[str, Any] = await self._calls.call(
            send, timeout=timeout, what=str(command.get("type"))
        )
        if response.get("success") is False:
            raise ProtocolError(
                f"pi {command.get('type')}: {response.get('error')}", json.dumps(response)
            )
        data = response.get("data")
        return data if isinstance(data, dict) else {}

    async def send(self, text: str, attachments: Sequence[Attachment] | None = None) -> None:
        command: dict[str, Any] = {"type": "prompt", "message": text}
        images = image_payload(attachments or ())
        if images:
            command["images"] = images
        if not self.parser.streaming:
            self._turn_mark.mark()
        if self.parser.streaming:
            # A steer sent before the run has started is lost by pi 0.73.1: wait for agent_start.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._agent_started.wait(), COMMAND_TIMEOUT)
            if self.parser.streaming:
                command["streamingBehavior"] = "steer"
        await self.command(command)

    async def follow_up(self, text: str, attachments: Sequence[Attachment] | None = None) -> None:
        """Queue a message for when the current run ends (``streamingBehavior: followUp``)."""
        command: dict[str, Any] = {"type": "prompt", "message": text}
        if self.parser.streaming:
            command["streamingBehavior"] = "followUp"
        images = image_payload(attachments or ())
        if images:
            command["images"] = images
        await self.command(command)

    async def interrupt(self) -> None:
        """``abort``, climbing :func:`corral._process.end_turn` when the run does not end (SIGINT,
        then the process group: the turn ends ``cancelled``, the session ``failed``); the cancelled
        turn's tool processes are reaped."""
        if self.transport is None:
            raise SessionError("pi is not running")
        await end_turn(
            transport=self.transport,
            cancel=lambda: self.command({"type": "abort"}),
            turn_over=lambda: not self.parser.streaming,
            mark=self._turn_mark,
            cancel_wait=self.cancel_wait,
        )

    async def set_model(self, model: str) -> None:
        provider, _, model_id = model.rpartition("/")
        if not provider:
            current = self.parser.state.get("model")
            provider = str(current.get("provider")) if isinstance(current, dict) else ""
        await self.command({"type": "set_model", "provider": provider, "modelId": model_id})
        self.model = model

    async def set_thinking_level(self, level: str) -> None:
        if level not in THINKING_LEVELS:
            raise ValueError(f"thinking level must be one of {', '.join(THINKING_LEVELS)}")
        await self.command({"type": "set_thinking_level", "level": level})

    async def compact(self, instructions: str | None = None) -> dict[str, Any]:
        """Compact the conversation now (``compact``); returns pi's summary data."""
        command: dict[str, Any] = {"type": "compact"}
        if instructions:
            command["customInstructions"] = instructions
        return await self.command(command, timeout=120)

    async def get_state(self) -> dict[str, Any]:
        return await self.command({"type": "get_state"})

    async def new_session(self) -> str | None:
        await self.command({"type": "new_session"})
        return self._report_session(await self.get_state())

    async def switch_session(self, session_path: str) -> str | None:
        await self.command({"type": "switch_session", "sessionPath": session_path})
        return self._report_session(await self.get_state())

    async def list_models(self) -> list[str]:
        return names_of(await self.describe_models())

    async def describe_models(self) -> list[ModelInfo]:
        """``get_available_models``: ``provider/id``; a model with ``reasoning: false`` takes no
        thinking level, the levels of one that reasons are not in the answer (``None``)."""
        data = await self.command({"type": "get_available_models"})
        out: list[ModelInfo] = []
        for m in data.get("models") or []:
            if not isinstance(m, dict):
                continue
            name = m.get("name")
            out.append(
                ModelInfo(
                    id=f"{m.get('provider')}/{m.get('id')}",
                    name=name if isinstance(name, str) else None,
                    efforts=() if m.get("reasoning") is False else None,
                )
            )
        return out

    async def get_usage(self) -> UsageTotals:
        return self._usage.copy() if self._usage is not None else UsageTotals()

    async def query_status(self) -> dict[str, Any]:
        alive = self.transport is not None and self.transport.returncode is None
        state = await self.get_state() if alive else {}
        model = state.get("model") if isinstance(state.get("model"), dict) else {}
        assert isinstance(model, dict)
        return {
            "alive": alive,
            "busy": bool(state.get("isStreaming")),
            "compacting": bool(state.get("isCompacting")),
            "session_file": state.get("sessionFile"),
            "agent_session_id": state.get("sessionId"),
            "model": model.get("id"),
            "thinking_level": state.get("thinkingLevel"),
            "pending_messages": state.get("pendingMessageCount"),
        }
