"""OpenCode over its own HTTP server (agent id ``opencode``): ``opencode serve`` + ``/event`` SSE.

One adapter owns one ``opencode serve`` process (free loopback port, generated password), one
``/event`` subscription (reconnecting; see :mod:`corral._process._sse`) and one OpenCode session.
Prompts go out with ``prompt_async`` and the turn ends when the session goes idle. A prompt sent
while a turn runs is queued by OpenCode and answered in the same busy period (verified on
1.18.33), so ``cap_input_during_turn`` holds. ``interrupt()`` climbs the stop ladder
(:func:`corral._process.end_turn`): ``POST /session/{id}/abort``, then SIGINT to the server's
process group, then the group is killed; a turn the abort did not end ends ``cancelled`` when the
server goes, and the session ends ``failed`` (the OpenCode session stays on disk for a resume).

Approvals: the session is created with a permission ruleset when ``permission_mode`` is set
(``ask`` / ``allow`` / ``deny``, or Claude Code's ``default`` / ``acceptEdits`` /
``bypassPermissions`` / ``plan``; see ``_opencode_request.PERMISSION_MODES``).

Transport: the server process, its HTTP requests and its ``/event`` stream come from
``self.transport_factory`` (:class:`corral._process.HttpTransport`; live
:class:`~corral._process.ServerTransport`, in tests :class:`corral.testing.HttpRecording`), which
also taps them for ``corral record``. Live and replayed, every event goes to the parser's ``feed``
and every answered exchange to its ``feed_sent``, from the same two methods here.

Resume: the OpenCode session id goes to ``on_session_id``; a new adapter with
``resume_session_id`` and the same HOME (OpenCode keeps sessions under the XDG data dir) reuses it.
``corral attach`` opens OpenCode's TUI on the same server and session (see ``_opencode_attach``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any, ClassVar, Unpack

from .._process import (
    DEFAULT_HTTP_TRANSPORT,
    HttpTransport,
    HttpTransportFactory,
    RequestFailed,
    Tap,
    TurnMark,
    end_turn,
)
from .._process._decode import BadJson, loads
from .._process._sse import OverlongEvent
from .._process._stop import CANCEL_WAIT
from ..errors import ProtocolError, SessionError, SpawnError
from ..events import (
    AgentInfo,
    ApprovalDecision,
    EndReason,
    ErrorEvent,
    Event,
    SessionEnded,
    SessionStarted,
    Usage,
)
from ..events._text import storable
from ..intents import Intent
from ..intents import opencode as intent_rules
from ..protocols._opencode_tools import REPLY_FOR
from ..protocols.opencode_sse import OpenCodeSseParser
from ._handoff_terminal import TerminalHandoff
from ._model_info import ModelInfo, effort_names, names_of
from ._opencode_attach import AttachRecord, remove_record, write_record
from ._opencode_request import permission_ruleset, prompt_parts
from ._opencode_server import USERNAME, build_serve_launch, free_port, new_password, wait_ready
from ._options import STANDARD_OPTIONS, LaunchArgs
from ._stores import store_hooks
from ._usage import UsageTotals
from .base import Attachment, BaseAdapter

READY_DEADLINE = 60.0
REQUEST_TIMEOUT = 30.0
STOP_GRACE = 5.0
"""Seconds ``opencode serve`` gets to exit on SIGTERM before it is killed."""


@store_hooks("_store_opencode")
class OpenCodeAdapter(TerminalHandoff, BaseAdapter):
    agent_id = "opencode"
    display_name = "OpenCode"
    cli_binary = "opencode"
    # Hand-off (seed 003; adapters/_handoff_terminal.py).
    handoff_kind = "persistent"
    handoff_processes = ("opencode",)
    handoff_session_flags = ("--session", "-s")
    handoff_resume_args = ("--session", "{sid}")
    cancel_wait: ClassVar[float] = CANCEL_WAIT
    """Seconds the abort gets to end the turn before corral signals the server."""
    ready_interval: float = 0.025
    """Seconds between readiness probes while ``opencode serve`` boots (a refused loopback connect
    costs microseconds; a coarser poll adds half an interval to every start, issue 20)."""
    transport_factory: HttpTransportFactory = DEFAULT_HTTP_TRANSPORT
    """Builds the server transport (a replay in tests: :meth:`corral.testing.HttpRecording.factory`)."""

    cap_image_input = True
    cap_thinking = True
    cap_permissions = True
    cap_subagents = True
    cap_cancel = True
    cap_input_during_turn = True
    cap_resume = True
    cap_interact = True
    cap_attached_terminal = True

    provides_models = True
    provides_usage = True

    enforceable_intents = frozenset(Intent)
    intent_renderer = intent_rules.render

    supported_options = STANDARD_OPTIONS | {"vendor_permission_mode"}

    def __init__(
        self,
        *,
        tap: Tap | None = None,
        base_env: dict[str, str] | None = None,
        attach_root: Path | None = None,
        ready_deadline: float = READY_DEADLINE,
        **launch: Unpack[LaunchArgs],
    ) -> None:
        self.take_options(launch, binary_name="opencode")
        if self.permission_mode is not None:
            permission_ruleset(self.permission_mode)  # validate early
        self.tap = tap
        self.base_env = dict(os.environ if base_env is None else base_env)
        self.attach_root = attach_root
        self.ready_deadline = ready_deadline
        self.parser = OpenCodeSseParser()
        self.server: HttpTransport | None = None
        self.version: str | None = None
        self._password = ""
        self._queue: asyncio.Queue[Event] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []
        self._connected = asyncio.Event()
        self._model_ref: dict[str, str] | None = None
        self._stopping = False
        self._ended = False
        self._attach_path: Path | None = None
        self._corral_session_id = ""
        self._usage = UsageTotals()
        self._turn_mark = TurnMark()

    # ── lifecycle ──
    async def start(self, session_id: str) -> AgentInfo:
        env = {**self.base_env, **self.env}
        launch = build_serve_launch(
            binary=self.binary,
            port=free_port(),
            password=new_password(),
            env=env,
            extra_args=self.extra_args,
        )
        self._password = launch.password
        self.server = self.transport_factory(
            launch.argv,
            env=launch.env,
            cwd=self.cwd,
            url=launch.url,
            auth=(USERNAME, launch.password),
            tap=self.tap,
        )
        await self.server.start()
        try:
            self.version = await wait_ready(
                self.server,
                directory=self.cwd,
                deadline=self.ready_deadline,
                interval=self.ready_interval,
            )
            await self._subscribe()
            await self._open_session()
            self._model_ref = await self._resolve_model(self.model)
        except BaseException:
            await self._teardown()
            raise
        self._tasks.append(asyncio.create_task(self._watch_server(), name="opencode-watch"))
        sid = self.parser.session_id
        assert sid is not None
        if self.on_session_id is not None:
            self.on_session_id(sid)
        self._corral_session_id = session_id
        self._write_attach_record()
        info = self.make_agent_info(
            version=self.version or None, model=self.model, agent_session_id=sid
        )
        self._queue.put_nowait(SessionStarted(agent=info, cwd=self.cwd))
        return info

    async def _subscribe(self) -> None:
        assert self.server is not None
        self._tasks.append(asyncio.create_task(self._pump(self.server), name="opencode-sse"))
        try:
            await asyncio.wait_for(self._connected.wait(), 30)
        except TimeoutError:
            raise SpawnError(
                self.server.argv, "the /event stream did not connect within 30s"
            ) from None

    async def _on_connect(self) -> None:
        if self._connected.is_set():
            # A reconnect: whatever happened meanwhile is lost, so re-read the session status.
            with contextlib.suppress(SessionError, ProtocolError):
                await self._request("GET", "/session/status")
        self._connected.set()

    def _on_sse_error(self, exc: BaseException) -> None:
        # A dropped connection is reconnected (and the status re-read) without a word; an event
        # too big to read is dropped, and said so.
        if isinstance(exc, OverlongEvent):
            self._emit([ErrorEvent(message=f"opencode sent an overlong /event frame: {exc}")])

    async def _pump(self, server: HttpTransport) -> None:
        stream = server.events(
            "/event",
            params={"directory": self.cwd},
            on_connect=self._on_connect,
            on_error=self._on_sse_error,
        )
        async for data in stream:
            self._feed_event(data)

    def _feed_event(self, data: str) -> None:
        """One ``/event`` data string, live or replayed, into the parser."""
        try:
            obj = loads(data)
        except BadJson:
            self._emit([ErrorEvent(message="undecodable /event data", raw=data)])
            return
        try:
            events = self.parser.feed(obj)
        except Exception as exc:  # a parser bug must not stall the session
            events = [ErrorEvent(message=f"could not parse an /event object: {exc!r}", raw=obj)]
        self._emit(events)

    async def _open_session(self) -> None:
        if self.resume_session_id:
            await self._request("GET", f"/session/{self.resume_session_id}")
            if self.permission_mode is not None:
                await self.set_permission_mode(self.permission_mode)
            return
        body: dict[str, Any] = {"title": "corral session"}
        if self.permission_mode is not None:
            body["permission"] = permission_ruleset(self.permission_mode)
        await self._request("POST", "/session", body)

    async def _resolve_model(self, model: str | None) -> dict[str, str] | None:
        if not model:
            return None
        if "/" in model:
            provider, _, model_id = model.partition("/")
            return {"providerID": provider, "modelID": model_id}
        providers = await self._request("GET", "/config/providers")
        for provider in (
            (providers or {}).get("providers", []) if isinstance(providers, dict) else []
        ):
            if isinstance(provider, dict) and model in (provider.get("models") or {}):
                return {"providerID": str(provider.get("id")), "modelID": model}
        return None

    async def _watch_server(self) -> None:
        assert self.server is not None
        code = await self.server.wait()
        if self._stopping:
            return
        self._emit(self.parser.finish())
        self._end(EndReason.FAILED, code, "opencode serve exited", self.server.stderr_tail)

    # ── the turn ──
    async def send(self, text: str, attachments: Sequence[Attachment] | None = None) -> None:
        sid = self._sid()
        body: dict[str, Any] = {"parts": prompt_parts(text, attachments or ())}
        if self._model_ref is not None:
            body["model"] = self._model_ref
        if self.effort:
            body["variant"] = self.effort
        if not self.parser.turn.open:
            self._turn_mark.mark()
        await self._request("POST", f"/session/{sid}/prompt_async", body)

    async def stream(self) -> AsyncIterator[Event]:
        while True:
            event = await self._queue.get()
            if isinstance(event, Usage):
                self._count_usage(event)
            yield event
            if isinstance(event, SessionEnded):
                return

    async def interrupt(self) -> None:
        """``abort``, climbing :func:`corral._process.end_turn` when the turn does not end; the
        cancelled turn's tool processes are reaped."""
        sid = self._sid()
        if self.server is None:
            raise SessionError("the OpenCode server is not running")
        if self.parser.turn.open:
            # Asked to stop: however the turn now ends (an abort that times out, a killed
            # server), it ends cancelled.
            self.parser.turn.interrupted = True
        await end_turn(
            transport=self.server,
            cancel=lambda: self._request("POST", f"/session/{sid}/abort"),
            turn_over=lambda: not self.parser.turn.open,
            mark=self._turn_mark,
            cancel_wait=self.cancel_wait,
        )

    async def respond_approval(
        self,
        request_id: str,
        decision: ApprovalDecision,
        *,
        option_id: str | None = None,
        updated_input: Any = None,
        message: str | None = None,
    ) -> None:
        reply = option_id if option_id in ("once", "always", "reject") else REPLY_FOR[decision]
        body: dict[str, Any] = {"reply": reply}
        if message:
            body["message"] = message
        await self._request("POST", f"/permission/{request_id}/reply", body)

    async def answer_question(self, request_id: str, answers: dict[str, str]) -> None:
        texts = self.parser.question_texts(request_id) or list(answers)
        ordered = [[answers[q]] if q in answers else [] for q in texts]
        await self._request("POST", f"/question/{request_id}/reply", {"answers": ordered})

    async def set_model(self, model: str) -> None:
        self._model_ref = await self._resolve_model(model)
        self.model = model

    async def set_permission_mode(self, mode: str) -> None:
        ruleset = permission_ruleset(mode)
        await self._request("PATCH", f"/session/{self._sid()}", {"permission": ruleset})
        self.permission_mode = mode

    async def fork(self, message_id: str | None = None) -> str:
        """Fork the session (at ``message_id``, else whole) and continue on the fork."""
        body = {"messageID": message_id} if message_id else {}
        await self._request("POST", f"/session/{self._sid()}/fork", body)
        sid = self._sid()
        if self.on_session_id is not None:
            self.on_session_id(sid)
        self._write_attach_record()
        return sid

    def _write_attach_record(self) -> None:
        """Tell ``corral attach`` where this session lives (rewritten when the session changes)."""
        assert self.server is not None
        self._attach_path = write_record(
            AttachRecord(
                session_id=self._corral_session_id,
                agent_session_id=self._sid(),
                url=self.server.url,
                password=self._password,
                username=USERNAME,
                cwd=self.cwd,
                binary=self.binary,
                pid=self.server.pid,
            ),
            self.attach_root,
        )

    async def list_models(self) -> list[str]:
        return names_of(await self.describe_models())

    async def describe_models(self) -> list[ModelInfo]:
        """``GET /config/providers``: ``provider/model`` ids, each with its ``variants`` (the
        efforts the server takes as a prompt's ``variant``; ``{}``: none)."""
        providers = await self._request("GET", "/config/providers")
        out: list[ModelInfo] = []
        for provider in (
            (providers or {}).get("providers", []) if isinstance(providers, dict) else []
        ):
            if not isinstance(provider, dict) or not isinstance(provider.get("models"), dict):
                continue
            for key, model in provider["models"].items():
                variants = model.get("variants") if isinstance(model, dict) else None
                name = model.get("name") if isinstance(model, dict) else None
                out.append(
                    ModelInfo(
                        id=f"{provider.get('id')}/{key}",
                        name=name if isinstance(name, str) else None,
                        efforts=effort_names(list(variants))
                        if isinstance(variants, dict)
                        else None,
                    )
                )
        return out

    async def get_usage(self) -> UsageTotals:
        return self._usage.copy()

    async def query_status(self) -> dict[str, Any]:
        alive = self.server is not None and self.server.returncode is None
        status: Any = None
        if alive:
            statuses = await self._request("GET", "/session/status")
            status = (statuses or {}).get(self._sid()) if isinstance(statuses, dict) else None
        return {
            "alive": alive,
            "busy": bool(status) and status.get("type") != "idle",
            "status": (status or {}).get("type", "idle") if alive else "stopped",
            "agent_session_id": self.parser.session_id,
            "model": self.model,
            "url": self.server.url if self.server else None,
        }

    def _count_usage(self, usage: Usage) -> None:
        self._usage.add(usage)

    async def stop(self) -> None:
        if self._stopping:
            return
        self._stopping = True
        code = await self._teardown()
        self._emit(self.parser.finish())
        self._end(EndReason.COMPLETED, code, None, None)

    async def _teardown(self) -> int | None:
        self._stopping = True
        remove_record(self._attach_path)
        self._attach_path = None
        if self.server is not None:
            self.server.close_events()
        code = await self.server.kill(STOP_GRACE) if self.server is not None else None
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        if self.server is not None:
            await self.server.aclose()
        return code

    # ── plumbing ──
    def _sid(self) -> str:
        sid = self.parser.session_id
        if sid is None:
            raise SessionError("the OpenCode session is not open")
        return sid

    def _emit(self, events: list[Event]) -> None:
        for event in events:
            if not self._ended:
                self._queue.put_nowait(storable(event))

    def _end(
        self, reason: EndReason, code: int | None, message: str | None, tail: str | None
    ) -> None:
        if self._ended:
            return
        self._queue.put_nowait(
            SessionEnded(reason=reason, exit_code=code, message=message, stderr_tail=tail)
        )
        self._ended = True

    async def _request(self, method: str, path: str, body: Any = None) -> Any:
        """One HTTP call to the server (tapped by the transport), shown to the parser."""
        if self.server is None:
            raise SessionError("the OpenCode server is not running")
        started = time.monotonic()
        try:
            reply = await self.server.request(
                method, path, params={"directory": self.cwd}, body=body, timeout=REQUEST_TIMEOUT
            )
        except RequestFailed as exc:
            raise SessionError(
                f"{method} {path} failed after {time.monotonic() - started:.1f}s: {exc}"
            ) from exc
        exchange = {
            "method": method,
            "path": path,
            "body": body,
            "status": reply.status,
            "response": reply.payload,
        }
        self._emit(self.parser.feed_sent(exchange))
        if reply.status >= 400:
            raise SessionError(f"{method} {path}: HTTP {reply.status}: {str(reply.payload)[:500]}")
        return reply.payload


__all__ = ["OpenCodeAdapter", "permission_ruleset", "prompt_parts"]
