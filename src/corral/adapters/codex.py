"""The Codex driver: ``codex app-server`` over JSON-RPC (:class:`CodexAdapter`), and the headless
one-shot ``codex exec --json`` (:class:`CodexExecAdapter`, in ``_codex_exec``).

One app-server process serves the whole session: ``initialize`` → ``initialized`` →
``thread/start`` (or ``thread/resume`` with ``resume_session_id`` = a thread id) → one
``turn/start`` per prompt. A prompt sent while a turn runs is delivered with ``turn/steer``;
``interrupt()`` is ``turn/interrupt``. Approval requests from codex (JSON-RPC requests *to* us)
wait until :meth:`respond_approval` answers them; any other server request gets a JSON-RPC
"method not found" error and the session goes on. If the process dies, the running turn ends with
an error carrying the stderr tail and the session ends ``failed`` — nothing waits forever.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Sequence
from typing import Any, ClassVar, Unpack

from .._process import (
    DEFAULT_TRANSPORT,
    METHOD_NOT_FOUND,
    JsonRpcClient,
    Tap,
    TransportFactory,
    TurnMark,
    end_turn,
)
from .._process._stop import CANCEL_WAIT
from .._version import __version__
from ..errors import ConfigError, JsonRpcError, ProcessError, UnsupportedOperation
from ..events import (
    AgentInfo,
    ApprovalDecision,
    ApprovalResolved,
    EndReason,
    Event,
    QuestionAnswered,
    SessionEnded,
    SessionStarted,
    StatusChanged,
    StopReason,
    TurnCompleted,
    UnknownEvent,
    Usage,
)
from ..events._text import storable
from ..intents import Intent
from ..intents import codex as intent_rules
from ..protocols.codex_app_server import (
    APPROVAL_METHODS,
    USER_INPUT_REQUEST,
    AppServerParser,
    approval_result,
    question_result,
)
from . import _codex_launch as launch
from ._codex_common import Attachments, native_argv_env
from ._codex_exec import CodexExecAdapter  # re-exported: one module per vendor
from ._codex_handoff import CodexTerminal
from ._model_info import ModelInfo, effort_names, names_of
from ._options import STANDARD_OPTIONS, LaunchArgs
from ._stores import store_hooks
from ._usage import UsageTotals
from .base import Attachment, BaseAdapter, parse_version

_REQUEST_TIMEOUT = 60.0
_CLOSE_GRACE = 3.0


@store_hooks("_store_codex")
class CodexAdapter(CodexTerminal, BaseAdapter):
    """Codex through ``codex app-server`` (JSON-RPC 2.0 on stdio)."""

    agent_id: ClassVar[str] = "codex"
    cancel_wait: ClassVar[float] = CANCEL_WAIT
    """Seconds ``turn/interrupt`` gets to end the turn before corral signals the app-server."""
    display_name: ClassVar[str] = "Codex"
    cli_binary: ClassVar[str | None] = "codex"
    # Hand-off (seed 003): Codex's terminal rules are shared (_codex_handoff.CodexTerminal).
    handoff_kind = "persistent"

    transport_factory: TransportFactory = DEFAULT_TRANSPORT
    """Builds the agent's line transport; a test plugs in :class:`corral.testing.Recording`."""

    cap_image_input = True
    cap_thinking = True
    cap_permissions = True
    cap_cancel = True
    cap_input_during_turn = True
    cap_resume = True
    cap_subagents = True

    provides_models = True
    provides_usage = True

    enforceable_intents = frozenset(Intent)
    intent_renderer = intent_rules.render

    supported_options = STANDARD_OPTIONS

    def __init__(
        self,
        *,
        approval_policy: str | None = None,
        sandbox: str | None = None,
        config: dict[str, Any] | None = None,
        tap: Tap | None = None,
        **launch: Unpack[LaunchArgs],
    ) -> None:
        self.take_options(launch, binary_name="codex")
        self.approval_policy = approval_policy
        self.sandbox = sandbox
        self.config = config
        self.tap = tap
        self.thread_id: str | None = None
        self.parser = AppServerParser()
        self._client: JsonRpcClient | None = None
        self._events: asyncio.Queue[Event] = asyncio.Queue()
        self._usage = UsageTotals()
        self._turn_id: str | None = None
        self._finished_turns: set[str] = set()
        self._approvals: dict[str, tuple[str, dict[str, Any], asyncio.Future[Any]]] = {}
        self._approval_ids = 0
        self._watcher: asyncio.Task[None] | None = None
        self._stopping = False
        self._ended = False
        self._attachments = Attachments()
        self._pending: dict[str, str | None] = {}  # overrides for the next turn/start
        self._cancelling = False
        self._turn_mark = TurnMark()

    # ── lifecycle ──
    async def start(self, session_id: str) -> AgentInfo:
        plan = launch.app_server_launch(
            binary=self.binary, extra_args=self.extra_args, env=self.env
        )
        _, lifted_approval, lifted_sandbox = launch.lift_policy(self.extra_args)
        approval = self.approval_policy or lifted_approval or launch.DEFAULT_APPROVAL
        sandbox = self.sandbox or lifted_sandbox or launch.DEFAULT_SANDBOX
        argv, env = native_argv_env(plan.argv, {**os.environ, **plan.env})
        transport = self.transport_factory(argv, env=env, cwd=self.cwd, tap=self.tap)
        await transport.start()
        client = JsonRpcClient(
            transport,
            on_request=self._on_request,
            on_notification=self._on_notification,
            on_other=self._on_other,
            jsonrpc_field=False,
            default_timeout=_REQUEST_TIMEOUT,
        )
        self._client = client
        client.start()
        try:
            init = await client.request(
                "initialize",
                {
                    "clientInfo": {"name": "corral", "title": "corral", "version": __version__},
                    "capabilities": {"experimentalApi": True},
                },
            )
            await client.notify("initialized")
            params = launch.thread_params(
                cwd=self.cwd,
                model=self.model,
                approval=approval,
                sandbox=sandbox,
                config=self.config,
                thread_id=self.resume_session_id,
            )
            method = "thread/resume" if self.resume_session_id else "thread/start"
            result = await client.request(method, params)
        except BaseException as exc:
            # Nothing may outlive a failed start: not the process, not the reader task.
            code = await asyncio.shield(client.close(_CLOSE_GRACE))
            self._ended = True
            if isinstance(exc, ProcessError):
                # At EOF the exit code and the last stderr lines may not be in yet; they are now.
                raise ProcessError(
                    f"codex app-server did not start: {exc}", code, transport.stderr_tail
                ) from exc
            raise
        thread = result.get("thread") or {}
        self.thread_id = thread.get("id")
        self.parser.thread_id = self.thread_id
        self.parser.model = result.get("model") or self.model
        if self.thread_id and self.on_session_id is not None:
            self.on_session_id(self.thread_id)
        self._watcher = asyncio.create_task(self._watch_exit(), name="codex-exit-watch")
        info = self.make_agent_info(
            version=parse_version(str(init.get("userAgent", ""))),
            model=self.parser.model,
            agent_session_id=self.thread_id,
        )
        self._emit(SessionStarted(agent=info, cwd=self.cwd, raw=result))
        return info

    async def stop(self) -> None:
        if self._client is None or self._stopping:
            return
        self._stopping = True
        if self._ended:  # the process died on its own: reap it and its group, stop our tasks
            await self._client.close(0.5)
            await self._client.transport.kill(0.5)
            return
        for method, _, future in self._approvals.values():
            if not future.done():
                future.set_result(
                    {"answers": {}} if method == USER_INPUT_REQUEST else {"decision": "cancel"}
                )
        if self._turn_id is not None:
            self._emit(TurnCompleted(stop_reason=StopReason.CANCELLED, turn_id=self._turn_id))
            self._turn_id = None
        code = await self._client.close(_CLOSE_GRACE)
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
        self._attachments.cleanup()
        killed = self._client.transport.killed_by_us
        self._end(
            SessionEnded(
                reason=EndReason.KILLED if killed else EndReason.COMPLETED,
                exit_code=code,
                stderr_tail=self._client.transport.stderr_tail[-4000:] or None,
            )
        )

    async def stream(self) -> AsyncIterator[Event]:
        while True:
            event = await self._events.get()
            yield event
            if isinstance(event, SessionEnded):
                return

    # ── prompts ──
    async def send(self, text: str, attachments: Sequence[Attachment] | None = None) -> None:
        client = self._require_client()
        items = self._attachments.items(text, attachments)
        if self._turn_id is not None:
            try:
                await client.request(
                    "turn/steer",
                    {"threadId": self.thread_id, "input": items, "expectedTurnId": self._turn_id},
                )
                return
            except JsonRpcError:
                pass  # the turn ended meanwhile (or cannot be steered): start a new one
        params = launch.turn_params(
            thread_id=str(self.thread_id),
            items=items,
            model=self._pending.pop("model", None),
            effort=self.effort,
            approval=self._pending.pop("approval", None),
            sandbox=self._pending.pop("sandbox", None),
        )
        self._turn_mark.mark()
        result = await client.request("turn/start", params)
        turn_id = (result.get("turn") or {}).get("id")
        if turn_id and turn_id not in self._finished_turns:
            self._turn_id = turn_id

    async def interrupt(self) -> None:
        """``turn/interrupt``, climbing :func:`corral._process.end_turn` when the turn does not end
        (SIGINT, then the process group: the turn ends ``cancelled``, the session ``failed``);
        the cancelled turn's tool processes (a ``sleep`` under codex's sandbox) are reaped."""
        client = self._require_client()
        turn_id = self._turn_id or self.parser.turn_id
        if turn_id is None:
            return

        async def cancel() -> None:
            await client.request("turn/interrupt", {"threadId": self.thread_id, "turnId": turn_id})

        await end_turn(
            transport=client.transport,
            cancel=cancel,
            turn_over=lambda: self._turn_id is None,
            before_escalate=lambda: setattr(self, "_cancelling", True),
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
        pending = self._approvals.get(request_id)
        if pending is None or pending[0] not in APPROVAL_METHODS:
            raise ConfigError(f"no pending codex approval {request_id!r}")
        method, params, future = pending
        if not future.done():
            future.set_result(approval_result(method, params, decision, option_id))
        self._emit(
            ApprovalResolved(
                request_id=request_id, decision=decision, option_id=option_id, message=message
            )
        )

    async def answer_question(self, request_id: str, answers: dict[str, str]) -> None:
        """Answer a ``QuestionAsked`` (question text or id → answer).

        codex 0.171 asks only with ``--enable default_mode_request_user_input`` in ``extra_args``
        (an under-development feature) or in plan mode, so ``cap_interact`` is not declared."""
        pending = self._approvals.get(request_id)
        if pending is None or pending[0] != USER_INPUT_REQUEST:
            raise ConfigError(f"no pending codex question {request_id!r}")
        _, params, future = pending
        if not future.done():
            future.set_result(question_result(params, answers))
        self._emit(QuestionAnswered(request_id=request_id, answers=dict(answers)))

    async def set_model(self, model: str) -> None:
        self.model = model
        self._pending["model"] = model
        self.parser.model = model
        self._emit(StatusChanged(status="model", message=model))

    async def set_permission_mode(self, mode: str) -> None:
        try:
            approval, sandbox = launch.permission_mode(mode)
        except ValueError as exc:
            raise UnsupportedOperation(self.agent_id, f"permission mode {mode!r}") from exc
        if approval is not None:
            self._pending["approval"] = approval
        if sandbox is not None:
            self._pending["sandbox"] = sandbox
        self._emit(StatusChanged(status="permission_mode", message=mode))

    async def list_models(self) -> list[str]:
        """``model/list``, every page (bounded): the models the app-server offers this account."""
        return names_of(await self.describe_models())

    async def describe_models(self) -> list[ModelInfo]:
        """``model/list``, every page (bounded), with each model's ``supportedReasoningEfforts``
        and ``defaultReasoningEffort``."""
        if self._client is None:
            raise UnsupportedOperation(self.agent_id, "model/list")
        models: list[ModelInfo] = []
        cursor: str | None = None
        for _ in range(_MODEL_PAGES):
            params: dict[str, Any] = {} if cursor is None else {"cursor": cursor}
            page = await self._client.request("model/list", params)
            models.extend(model_infos_of_page(page))
            cursor = page.get("nextCursor") if isinstance(page, dict) else None
            if not isinstance(cursor, str) or not cursor:
                break
        return models

    async def get_usage(self) -> UsageTotals:
        return self._usage.copy()

    async def query_status(self) -> dict[str, Any]:
        """Process, thread and turn as the driver knows them (no request to codex needed)."""
        transport = self._client.transport if self._client is not None else None
        return {
            "alive": transport is not None and transport.returncode is None and not self._ended,
            "pid": transport.pid if transport is not None else None,
            "busy": self._turn_id is not None,
            "thread_id": self.thread_id,
            "turn_id": self._turn_id,
            "model": self.parser.model,
            "pending_approvals": sorted(self._approvals),
        }

    # ── incoming ──
    def _on_notification(self, method: str, params: Any) -> None:
        for event in self.parser.notification(method, params if isinstance(params, dict) else {}):
            if isinstance(event, TurnCompleted):
                self._withdraw_requests(event.turn_id)
                if event.turn_id:
                    self._finished_turns.add(event.turn_id)
                if event.turn_id is None or event.turn_id == self._turn_id:
                    self._turn_id = None
            self._emit(event)

    async def _on_request(self, method: str, params: Any) -> Any:
        params = params if isinstance(params, dict) else {}
        if method not in APPROVAL_METHODS and method != USER_INPUT_REQUEST:
            self._emit(UnknownEvent(vendor_type=f"request:{method}", raw=params))
            return METHOD_NOT_FOUND
        self._approval_ids += 1
        kind = "question" if method == USER_INPUT_REQUEST else "approval"
        request_id = f"codex-{kind}-{self._approval_ids}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._approvals[request_id] = (method, params, future)
        for event in self.parser.request(request_id, method, params):
            self._emit(event)
        try:
            return await future
        finally:
            self._approvals.pop(request_id, None)

    def _withdraw_requests(self, turn_id: str | None) -> None:
        """A turn that ended (e.g. interrupted) leaves no request of its own open: codex resolved
        them itself; tell the UI they are withdrawn and release the waiting handlers."""
        for request_id, (method, params, future) in list(self._approvals.items()):
            if future.done() or (
                turn_id is not None and params.get("turnId") not in (None, turn_id)
            ):
                continue
            future.set_result(
                {"answers": {}} if method == USER_INPUT_REQUEST else {"decision": "cancel"}
            )
            if method == USER_INPUT_REQUEST:
                self._emit(QuestionAnswered(request_id=request_id, answers={}))
            else:
                self._emit(
                    ApprovalResolved(
                        request_id=request_id,
                        decision=ApprovalDecision.CANCEL,
                        message="the turn ended before an answer",
                    )
                )

    def _on_other(self, line: Any) -> None:
        if isinstance(line, bytes) and not line.strip():
            return  # blank lines carry nothing
        text = line.decode("utf-8", errors="replace") if isinstance(line, bytes) else repr(line)
        self._emit(UnknownEvent(vendor_type="non-json", raw=text[:2000]))

    async def _watch_exit(self) -> None:
        client = self._require_client()
        await client.eof.wait()
        if self._stopping:
            return
        try:
            code: int | None = await client.transport.wait(5.0)
        except TimeoutError:
            code = await client.transport.kill(1.0)
        tail = client.transport.stderr_tail[-4000:]
        message = f"codex app-server exited with code {code}"
        if self._turn_id is not None and self._cancelling:
            self._emit(TurnCompleted(stop_reason=StopReason.CANCELLED, turn_id=self._turn_id))
            self._turn_id = None
        elif self._turn_id is not None:
            detail = f"{message}: {tail.strip()[-1000:]}" if tail.strip() else message
            self._emit(
                TurnCompleted(stop_reason=StopReason.ERROR, turn_id=self._turn_id, error=detail)
            )
            self._turn_id = None
        for _, _, future in self._approvals.values():
            if not future.done():
                future.cancel()
        self._attachments.cleanup()
        self._end(
            SessionEnded(
                reason=EndReason.COMPLETED if code == 0 else EndReason.FAILED,
                exit_code=code,
                message=message,
                stderr_tail=tail or None,
            )
        )

    # ── helpers ──
    def _emit(self, event: Event) -> None:
        if not self._ended:
            if isinstance(event, Usage):
                self._usage.add(event)
            self._events.put_nowait(storable(event))

    def _end(self, event: SessionEnded) -> None:
        self._emit(event)
        self._ended = True

    def _require_client(self) -> JsonRpcClient:
        if self._client is None:
            raise ProcessError("codex session not started")
        return self._client


__all__ = ["CodexAdapter", "CodexExecAdapter"]


_MODEL_PAGES = 20


def models_of_page(page: Any) -> list[str]:
    """The model slugs of one ``model/list`` page (``data[].model``, else ``data[].id``)."""
    return names_of(model_infos_of_page(page))


def model_infos_of_page(page: Any) -> list[ModelInfo]:
    """One ``model/list`` page: slug, ``displayName``, ``supportedReasoningEfforts[]
    .reasoningEffort`` and ``defaultReasoningEffort``; anything malformed is skipped."""
    data = page.get("data") if isinstance(page, dict) else None
    if not isinstance(data, list):
        return []
    out: list[ModelInfo] = []
    for entry in data:
        if not isinstance(entry, dict):
            continue
        slug = entry.get("model") if isinstance(entry.get("model"), str) else entry.get("id")
        if not isinstance(slug, str) or not slug:
            continue
        name = entry.get("displayName")
        default = entry.get("defaultReasoningEffort")
        out.append(
            ModelInfo(
                id=slug,
                name=name if isinstance(name, str) else None,
                efforts=effort_names(entry.get("supportedReasoningEfforts"), "reasoningEffort"),
                default_effort=default if isinstance(default, str) and default else None,
            )
        )
    return out
