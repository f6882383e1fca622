"""Hermes Agent over its TUI gateway (adapter id ``hermes-gateway``; seed 000's ``hermes-gateway``).

hermes-agent 0.19.0 ships ``tui_gateway``: the JSON-RPC server its Ink TUI (``hermes --tui``),
desktop app and dashboard drive. The TUI starts it as ``<hermes's python> -m tui_gateway.entry``
in the workspace; it prints ``gateway.ready`` and then answers one request per stdin line and
streams ``event`` notifications (:mod:`corral.protocols.hermes_gateway`). This driver starts it
the same way, the interpreter read from the ``hermes`` script's ``#!`` line, so the pinned
install (``corral agents``) is what runs; the endpoint is the same ``HERMES_HOME`` config.yaml as
the ACP adapter's (:mod:`corral.redirect.hermes`).

* a session is ``session.create {cwd, model?, reasoning_effort?}``, or ``session.resume
  {session_id}`` with the stored id this driver reports through ``on_session_id``;
* ``send`` is ``prompt.submit``. A prompt sent while a turn runs is held here and submitted once
  the gateway is idle again (its own ``busy_input_mode`` would interrupt the running turn);
* ``interrupt`` is ``session.interrupt`` (the turn ends ``message.complete`` ``interrupted``),
  climbing :func:`corral._process.end_turn` if it does not;
* images are sent as ``image.attach_bytes`` (base64) right before ``prompt.submit``; any other
  attachment is refused;
* ``approval.request`` (dangerous commands, as Hermes's approval mode decides) is answered with
  ``approval.respond {choice}``; ``clarify.request`` with ``clarify.respond``; ``sudo.request``
  and ``secret.request`` are refused at once (nobody can type a password here) with a warning.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Unpack

from .._process import (
    DEFAULT_TRANSPORT,
    LineTransport,
    OverlongLine,
    Tap,
    TransportFactory,
    TurnMark,
    end_turn,
)
from .._process._decode import BadJson, loads
from .._process._jsonrpc import JsonRpcClient
from .._process._stop import CANCEL_WAIT
from ..errors import ConfigError, JsonRpcError, SessionError, UnsupportedOperation
from ..events import (
    AgentInfo,
    ApprovalDecision,
    ApprovalResolved,
    EndReason,
    ErrorEvent,
    Event,
    QuestionAnswered,
    SessionStarted,
    WarningEvent,
)
from ..intents import Intent, refusals
from ..intents import unguarded as intent_rules
from ..protocols._hermes_gateway_tools import CHOICE_DECISIONS
from ..protocols.hermes_gateway import HermesGatewayParser
from ._options import STANDARD_OPTIONS, LaunchArgs
from ._outbox import EventOutbox
from ._usage import UsageTotals
from .base import Attachment, BaseAdapter

READY_TIMEOUT = 60.0
"""Seconds the gateway gets to print ``gateway.ready`` (imports are slow on a busy machine)."""
REQUEST_TIMEOUT = 30.0
IDLE_WAIT = 30.0
"""Seconds a held prompt waits for the previous turn to let go of the session."""
_DECISION_CHOICES = {
    ApprovalDecision.ALLOW: "once",
    ApprovalDecision.ALLOW_ALWAYS: "session",
    ApprovalDecision.DENY: "deny",
    ApprovalDecision.CANCEL: "deny",
}


def gateway_python(binary: str) -> str:
    """The interpreter of the ``hermes`` script (its ``#!`` line), else the ``python`` beside it.

    ``ConfigError`` when neither exists: the gateway is a module of that interpreter's install.
    """
    path = Path(binary)
    with contextlib.suppress(OSError):
        with path.open("rb") as fh:
            first = fh.readline(4096)
        if first.startswith(b"#!"):
            words = first[2:].decode("utf-8", "replace").split()
            if words and Path(words[0]).is_file() and "python" in Path(words[0]).name:
                return words[0]
    for candidate in (path.parent / "python3", path.parent / "python"):
        if candidate.is_file():
            return str(candidate)
    raise ConfigError(f"cannot find the Python interpreter of {binary} (no #! line, no python)")


def build_gateway_argv(binary: str) -> list[str]:
    return [gateway_python(binary), "-m", "tui_gateway.entry"]


class HermesGatewayAdapter(EventOutbox, BaseAdapter):
    agent_id = "hermes-gateway"
    transport_factory: TransportFactory = DEFAULT_TRANSPORT
    display_name = "Hermes Agent (TUI gateway)"
    cli_binary = "hermes"
    cancel_wait: ClassVar[float] = CANCEL_WAIT

    cap_permissions = True
    """Hermes 0.19.0 asks before a command its danger patterns flag (``approvals.mode`` smart
    escalates to the user what its judge does not approve); file edits are not asked about."""
    cap_interact = True
    """Hermes's ``clarify`` tool reaches the client as ``clarify.request``."""
    cap_cancel = True
    cap_resume = True
    cap_image_input = True
    cap_thinking = True
    """The model's reasoning streams as ``reasoning.delta``."""
    """Images go up as ``image.attach_bytes`` (base64) before ``prompt.submit``."""

    provides_models = False
    models_unavailable = "the gateway's model.options lists provider catalogues, not the endpoint's"
    provides_usage = True

    enforceable_intents = frozenset({Intent.FULL})
    intent_renderer = intent_rules.render
    intent_refusals = refusals(f"Hermes {intent_rules.REASON}")
    supported_options = STANDARD_OPTIONS - {"extra_args"}
    """The gateway takes no command-line arguments: ``extra_args`` is refused, not dropped."""

    def __init__(
        self,
        *,
        tap: Tap | None = None,
        base_env: dict[str, str] | None = None,
        **launch: Unpack[LaunchArgs],
    ) -> None:
        extra = launch.get("extra_args")
        if extra:
            raise UnsupportedOperation("hermes-gateway", f"command-line arguments {list(extra)}")
        launch.pop("extra_args", None)
        self.take_options(launch, binary_name="hermes")
        base = dict(os.environ if base_env is None else base_env)
        # Tool progress events are what tool.start/complete ride on: never let a config hide them.
        self.env = {**base, **self.env, "HERMES_TUI_TOOL_PROGRESS": "all"}
        self.tap = tap
        self.parser = HermesGatewayParser()
        self.transport: LineTransport | None = None
        self.client: JsonRpcClient | None = None
        self._queue: asyncio.Queue[Event] = asyncio.Queue()
        self._ready = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._held: list[tuple[str, tuple[Attachment, ...]]] = []
        self._drainer: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._turn_mark = TurnMark()
        self._stopping = False
        self._ended = False
        self._usage = UsageTotals()

    # ── lifecycle ──
    async def start(self, session_id: str) -> AgentInfo:
        argv = build_gateway_argv(self.binary)
        env = {**self.env, "HERMES_CWD": self.cwd, "TERMINAL_CWD": self.cwd}
        self.transport = self.transport_factory(argv, env=env, cwd=self.cwd, tap=self.tap)
        await self.transport.start()
        self.client = JsonRpcClient(
            self.transport,
            on_notification=self._on_notification,
            on_other=self._on_other,
            default_timeout=REQUEST_TIMEOUT,
        )
        self.client.start()
        watcher = asyncio.create_task(self._watch_eof(), name="hermes-gateway-eof")
        self._tasks.add(watcher)
        try:
            await asyncio.wait_for(self._ready.wait(), READY_TIMEOUT)
            result = await self._open_session()
        except BaseException:
            await self.transport.kill()
            raise
        self.parser.feed({"id": 0, "result": result})
        stored = self.parser.stored_session_id
        if stored and self.on_session_id is not None:
            self.on_session_id(stored)
        info = result.get("info") if isinstance(result.get("info"), dict) else {}
        assert isinstance(info, dict)
        model = info.get("model") if isinstance(info.get("model"), str) else self.model
        agent = self.make_agent_info(model=model or None, agent_session_id=stored)
        self._emit([SessionStarted(agent=agent, cwd=self.cwd)])
        return agent

    async def _open_session(self) -> dict[str, Any]:
        if self.resume_session_id:
            result = await self.request("session.resume", {"session_id": self.resume_session_id})
        else:
            params: dict[str, Any] = {"cwd": self.cwd}
            if self.model:
                params["model"] = self.model
            if self.effort:
                params["reasoning_effort"] = self.effort
            result = await self.request("session.create", params)
        if not isinstance(result, dict) or not isinstance(result.get("session_id"), str):
            raise SessionError(f"the Hermes gateway opened no session: {result!r}"[:300])
        return result

    async def stop(self) -> None:
        if self._stopping or self.client is None:
            return
        self._stopping = True
        self._held.clear()
        if self._drainer is not None:
            self._drainer.cancel()
        code = await self.client.close(3.0)
        for task in list(self._tasks):
            task.cancel()
        self._emit(self.parser.finish())
        self._end(EndReason.COMPLETED, code, None)

    async def _watch_eof(self) -> None:
        assert self.client is not None and self.transport is not None
        await self.client.eof.wait()
        code: int | None = None
        with contextlib.suppress(Exception):
            code = await self.transport.wait(5.0)
        if self._stopping:
            return
        self._ready.set()  # a start() still waiting fails on the closed client, not the timeout
        self._emit(self.parser.finish())
        self._end(EndReason.FAILED, code, self.transport.stderr_tail)

    # ── reading ──
    def _on_notification(self, method: str, params: Any) -> None:
        message = {"method": method, "params": params}
        kind = params.get("type") if isinstance(params, dict) else None
        if kind == "gateway.ready":
            self._ready.set()
        self._emit(self.parser.feed(message))
        if kind in ("sudo.request", "secret.request") and isinstance(params, dict):
            self._refuse_prompt(str(kind), params)
        if self.parser.idle:
            self._idle.set()

    def _on_other(self, line: bytes | OverlongLine) -> None:
        if isinstance(line, OverlongLine):
            self._emit([ErrorEvent(message=f"hermes printed an overlong line ({line.size} bytes)")])
            return
        try:
            obj = loads(line)
        except BadJson:
            text = line.decode("utf-8", "replace")
            self._emit([ErrorEvent(message="hermes printed a line that is not JSON", raw=text)])
            return
        self._emit(self.parser.feed(obj))

    def _refuse_prompt(self, kind: str, params: dict[str, Any]) -> None:
        payload = params.get("payload") if isinstance(params.get("payload"), dict) else {}
        assert isinstance(payload, dict)
        rid = payload.get("request_id")
        method, key = (
            ("sudo.respond", "password") if kind == "sudo.request" else ("secret.respond", "value")
        )
        self._emit(
            [WarningEvent(message=f"Hermes asked for a {key}; corral answered empty", code=kind)]
        )
        if isinstance(rid, str):
            self._spawn(self.request(method, {"request_id": rid, key: ""}))

    def _spawn(self, coro: Any) -> None:
        async def run() -> None:
            with contextlib.suppress(Exception):
                await coro

        task = asyncio.create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ── requests ──
    async def request(self, method: str, params: dict[str, Any]) -> Any:
        if self.client is None:
            raise SessionError("the Hermes gateway is not running")
        message = {"method": method, "params": params}
        self._emit(self.parser.feed_sent(message))
        return await self.client.request(method, params)

    def _sid(self) -> str:
        sid = self.parser.session_id
        if sid is None:
            raise SessionError("the Hermes gateway has no session open")
        return sid

    async def send(self, text: str, attachments: Sequence[Attachment] | None = None) -> None:
        files = tuple(attachments or ())
        others = [a.name or a.media_type for a in files if not a.is_image]
        if others:
            raise UnsupportedOperation(self.agent_id, f"non-image attachments {others}")
        if self.parser.streaming or not self._idle.is_set() or self._held:
            self._held.append((text, files))
            if self._drainer is None or self._drainer.done():
                self._drainer = asyncio.create_task(self._drain(), name="hermes-gateway-held")
            return
        await self._submit(text, files)

    async def _submit(self, text: str, images: tuple[Attachment, ...] = ()) -> None:
        self._idle.clear()
        self._turn_mark.mark()
        try:
            for image in images:
                # Queued on the session; prompt.submit takes every image attached before it.
                await self.request(
                    "image.attach_bytes",
                    {
                        "session_id": self._sid(),
                        "content_base64": base64.b64encode(image.read_bytes()).decode(),
                        "filename": image.name or "image",
                    },
                )
            await self.request("prompt.submit", {"session_id": self._sid(), "text": text})
        except JsonRpcError as exc:
            self._emit(self.parser.submit_failed(exc.rpc_message or str(exc)))
            self._idle.set()
            raise SessionError(f"Hermes refused the prompt: {exc.rpc_message}") from exc

    async def _drain(self) -> None:
        while self._held:
            try:
                await asyncio.wait_for(self._idle.wait(), IDLE_WAIT)
            except TimeoutError:
                if self.transport is None or self.transport.returncode is not None:
                    self._held.clear()
                    return
                if self.parser.streaming:
                    continue  # a long turn: wait on, as long as the gateway lives
                # The turn ended but no session.info followed: send anyway (the gateway queues
                # it behind the finished turn's last steps).
            if self.parser.streaming:
                self._idle.clear()
                continue
            text, images = self._held.pop(0)
            try:
                await self._submit(text, images)
            except Exception as exc:
                self._emit([ErrorEvent(message=f"a held prompt could not be sent: {exc}")])

    async def interrupt(self) -> None:
        """``session.interrupt``; a held prompt is dropped with the turn it waited behind."""
        if self.transport is None:
            raise SessionError("the Hermes gateway is not running")
        self._held.clear()
        await end_turn(
            transport=self.transport,
            cancel=lambda: self.request("session.interrupt", {"session_id": self._sid()}),
            turn_over=lambda: not self.parser.streaming,
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
        pending = self.parser.approval
        if pending is None or pending.request_id != request_id:
            raise SessionError(f"no pending Hermes approval {request_id!r}")
        if updated_input is not None:
            raise UnsupportedOperation(self.agent_id, "approving with changed input")
        choice = option_id if option_id in CHOICE_DECISIONS else _DECISION_CHOICES[decision]
        if choice not in pending.choices:
            raise UnsupportedOperation(self.agent_id, f"the approval choice {choice!r} here")
        await self.request("approval.respond", {"session_id": self._sid(), "choice": choice})
        self._emit(
            [
                ApprovalResolved(
                    request_id=request_id,
                    decision=CHOICE_DECISIONS[choice],
                    option_id=choice,
                    message=message,
                )
            ]
        )

    async def answer_question(self, request_id: str, answers: dict[str, str]) -> None:
        answer = next(iter(answers.values()), "")
        await self.request("clarify.respond", {"request_id": request_id, "answer": answer})
        self._emit([QuestionAnswered(request_id=request_id, answers=answers)])

    async def get_usage(self) -> UsageTotals:
        return self._usage.copy() if self._usage is not None else UsageTotals()

    async def query_status(self) -> dict[str, Any]:
        alive = self.transport is not None and self.transport.returncode is None
        return {
            "alive": alive,
            "busy": self.parser.streaming,
            "session_id": self.parser.session_id,
            "agent_session_id": self.parser.stored_session_id,
            "model": self.parser.info.get("model"),
            "held_prompts": len(self._held),
        }
