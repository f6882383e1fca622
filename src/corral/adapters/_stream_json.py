"""The driver shared by Claude Code and Qwen Code: one persistent process speaking stream-json.

stdin stays a pipe for the whole session. The ``initialize`` control request goes first; user
messages follow, also while a turn runs (the CLI queues them). Lines the CLI prints go through the
:class:`~corral.protocols.claude_stream_json.ClaudeStreamParser`; control requests it sends us are
answered here (``can_use_tool`` through :meth:`respond_approval` / :meth:`answer_question`; anything
else gets an error reply so the CLI never waits forever).

Bytes that are not the protocol never crash the session: an overlong line, a line that is not
valid JSON, or binary garbage each become an ``Error`` event; the session always ends with exactly
one ``SessionEnded``: ``completed`` (exit 0), ``failed`` (anything else, with the stderr tail) or
``killed`` (we had to signal it).

:meth:`interrupt` climbs :func:`corral._process.end_turn`: the ``interrupt`` control request, then
SIGINT, then the process group is killed; if the process had to go, the turn ends ``cancelled`` and
the session goes on in a new process resumed with ``--resume <session id>`` (the next :meth:`send`
waits for it). Tools the cancelled turn started are reaped.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, ClassVar, Unpack

import msgspec

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
from .._record import replace
from ..errors import ProcessError, ProtocolError, SessionError
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
from ..protocols._total import parse_error
from ..protocols.claude_stream_json import ClaudeStreamParser
from ._launch import Launch, StreamJsonRequest
from ._options import STANDARD_OPTIONS, LaunchArgs
from ._stream_json_wire import attachment_block, bad_line, session_permissions
from ._usage import UsageTotals
from .base import Attachment, BaseAdapter

_encoder = msgspec.json.Encoder()
_END = object()


class StreamJsonAdapter(BaseAdapter, abstract=True):
    """Base of the stream-json adapters; subclasses supply :meth:`launch` and their capabilities."""

    default_binary: ClassVar[str]
    control_timeout: ClassVar[float] = 30.0
    stop_grace: ClassVar[float] = 5.0
    cancel_wait: ClassVar[float] = 5.0
    """Seconds the ``interrupt`` control request gets to end the turn before corral signals."""
    interrupt_exits: ClassVar[bool] = False
    """The CLI exits on ``interrupt`` (Qwen Code): the session always continues in a new process."""
    transport_factory: TransportFactory = DEFAULT_TRANSPORT
    """Builds the agent's line transport; a test plugs in :class:`corral.testing.Recording`."""

    supported_options = STANDARD_OPTIONS | {"vendor_permission_mode"}

    def __init__(
        self,
        *,
        tap: Tap | None = None,
        base_env: Mapping[str, str] | None = None,
        **launch: Unpack[LaunchArgs],
    ) -> None:
        self.take_options(launch, binary_name=self.default_binary)
        self.tap = tap
        self.base_env = dict(os.environ if base_env is None else base_env)
        self.parser = ClaudeStreamParser()
        self.transport: LineTransport | None = None
        self.agent_session_id: str | None = None
        self._usage = UsageTotals()
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._calls: Correlator[str] = Correlator(lambda n: f"req_{n}_{secrets.token_hex(4)}")
        self._reader: asyncio.Task[None] | None = None
        self._ended = False
        self._actions: list[Callable[[], Awaitable[None]]] = []
        """Replies to send once the current line's events are queued (the reader runs them)."""
        self._restart_on_exit = False
        self._remembered: set[tuple[str, str]] = set()
        """Approvals corral itself remembers for the session (for CLIs that cannot)."""
        self._restart_task: asyncio.Task[None] | None = None
        self._turn_mark = TurnMark()
        self.init_response: dict[str, Any] = {}
        """The agent's answer to ``initialize`` (Claude Code lists its models there)."""

    # ── subclass hooks ──
    def launch_request(self) -> StreamJsonRequest:
        return StreamJsonRequest(
            binary=self.binary,
            cwd=self.cwd,
            model=self.model,
            permission_mode=self.permission_mode,
            resume=self.resume_session_id,
            effort=self.effort,
            extra_args=tuple(self.extra_args),
            env=self.env,
        )

    def build(self, request: StreamJsonRequest) -> Launch:
        raise NotImplementedError

    def review(self, events: list[Event]) -> list[Event]:
        """A subclass's last look at the events of one line (it may answer requests itself)."""
        return events

    def initialize_request(self) -> dict[str, Any]:
        return {"subtype": "initialize", "hooks": None}

    # ── the four coroutines ──
    async def start(self, session_id: str) -> AgentInfo:
        launch = await self._spawn(self.launch_request())
        info = self.make_agent_info(model=self.model, agent_session_id=self.resume_session_id)
        await self._queue.put(SessionStarted(agent=info, cwd=launch.cwd))
        return info

    async def _spawn(self, request: StreamJsonRequest) -> Launch:
        launch = self.build(request)
        transport = self.transport_factory(
            launch.argv, env=launch.env, cwd=launch.cwd, tap=self.tap
        )
        self.transport = transport
        await transport.start()
        self._ended = False
        self._reader = asyncio.create_task(
            self._read_loop(transport), name=f"{self.agent_id}-reader"
        )
        try:
            answer = await self._control(self.initialize_request())
        except (ProtocolError, ProcessError, SessionError):
            await self._teardown()
            raise
        self.init_response = answer if isinstance(answer, dict) else {}
        return launch

    async def send(self, text: str, attachments: Sequence[Attachment] | None = None) -> None:
        await self._await_restart()
        content = self.user_content(text, attachments or ())
        if not self.parser.turn_open:
            self._turn_mark.mark()
        await self._write(
            {
                "type": "user",
                "message": {"role": "user", "content": content},
                "parent_tool_use_id": None,
                "session_id": self.agent_session_id or "",
            }
        )

    async def stream(self) -> AsyncIterator[Event]:
        while True:
            item = await self._queue.get()
            if item is _END:
                return
            yield item

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            await self._await_restart()
        self._restart_on_exit = False
        transport = self.transport
        if transport is None:
            return
        await transport.close_stdin()
        if self._reader is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._reader), self.stop_grace)
            except TimeoutError:
                await transport.kill()
        await self._teardown()

    # ── interaction ──
    async def interrupt(self) -> None:
        """End the current turn within a bound; see the module docstring."""
        await self._await_restart()
        transport = self.transport
        if transport is None or self._ended:
            raise SessionError("the session is not running")
        if self.interrupt_exits:
            self._restart_on_exit = True

        async def cancel() -> None:
            with contextlib.suppress(ProcessError, ProtocolError):
                await self._control({"subtype": "interrupt"}, timeout=self.cancel_wait)

        def expect_restart() -> None:
            self._restart_on_exit = True

        await end_turn(
            transport=transport,
            cancel=cancel,
            turn_over=lambda: not self.parser.turn_open,
            before_escalate=expect_restart,
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
        request = self.parser.pending_request(request_id)
        if request is None:
            raise SessionError(f"no pending approval request {request_id!r}")
        if option_id is not None:
            decision = ApprovalDecision(option_id)
        answer: dict[str, Any]
        if decision in (ApprovalDecision.ALLOW, ApprovalDecision.ALLOW_ALWAYS):
            answer = {
                "behavior": "allow",
                "updatedInput": updated_input
                if updated_input is not None
                else request.get("input", {}),
            }
            if decision is ApprovalDecision.ALLOW_ALWAYS:
                answer["updatedPermissions"] = session_permissions(request)
        else:
            answer = {"behavior": "deny", "message": message or "The user denied this action."}
            if decision is ApprovalDecision.CANCEL:
                answer["interrupt"] = True
        await self._reply(request_id, answer)

    async def answer_question(self, request_id: str, answers: dict[str, str]) -> None:
        request = self.parser.pending_request(request_id)
        if request is None:
            raise SessionError(f"no pending question {request_id!r}")
        tool_input = request.get("input")
        updated = {**(tool_input if isinstance(tool_input, dict) else {}), "answers": dict(answers)}
        await self._reply(request_id, {"behavior": "allow", "updatedInput": updated})

    async def set_model(self, model: str) -> None:
        await self._control({"subtype": "set_model", "model": model})
        self.model = model

    async def set_permission_mode(self, mode: str) -> None:
        await self._control({"subtype": "set_permission_mode", "mode": mode})
        self.permission_mode = mode

    async def query_status(self) -> dict[str, Any]:
        """What the driver knows without asking the CLI (stream-json has no status request)."""
        transport = self.transport
        return {
            "alive": transport is not None and transport.returncode is None and not self._ended,
            "pid": transport.pid if transport else None,
            "busy": self.parser.turn_open,
            "agent_session_id": self.agent_session_id,
            "model": self.parser.model or self.model,
            "permission_mode": self.permission_mode or self.parser.permission_mode,
            "version": self.parser.version,
        }

    async def get_usage(self) -> UsageTotals:
        return self._usage.copy()

    # ── wire helpers ──
    def user_content(self, text: str, attachments: Sequence[Attachment]) -> list[dict[str, Any]]:
        """The ``message.content`` blocks of a user message: the text, then one block per file."""
        return [{"type": "text", "text": text}, *(attachment_block(a) for a in attachments)]

    async def _write(self, obj: dict[str, Any]) -> None:
        if self.transport is None or self._ended:
            raise SessionError("the session is not running")
        await self.transport.write_line(_encoder.encode(obj))
        for event in self.parser.feed_sent(obj):
            await self._queue.put(event)

    async def _reply(self, request_id: str, answer: dict[str, Any]) -> None:
        await self._write(
            {
                "type": "control_response",
                "response": {"subtype": "success", "request_id": request_id, "response": answer},
            }
        )

    async def _control(self, request: dict[str, Any], timeout: float | None = None) -> Any:
        async def send(request_id: str) -> None:
            await self._write(
                {"type": "control_request", "request_id": request_id, "request": request}
            )

        limit = self.control_timeout if timeout is None else timeout
        return await self._calls.call(send, timeout=limit, what=str(request.get("subtype")))

    # ── reading ──
    async def _read_loop(self, transport: LineTransport) -> None:
        try:
            async for line in transport.lines():
                for event in self._on_line_safely(line):
                    await self._queue.put(event)
                while self._actions:
                    await self._actions.pop(0)()
        finally:
            await self._finish(transport)

    def _on_line_safely(self, line: bytes | OverlongLine) -> list[Event]:
        """The read loop's safety net: no line the agent prints may end the session."""
        try:
            return self._on_line(line)
        except Exception as exc:
            head = line if isinstance(line, bytes) else line.head
            return [parse_error(type(self).__name__, exc, head[:4096].decode("utf-8", "replace"))]

    def _on_line(self, line: bytes | OverlongLine) -> list[Event]:
        if isinstance(line, OverlongLine):
            return [
                ErrorEvent(
                    message=f"dropped a {line.size}-byte line from the agent (over the line limit)",
                    code="line_too_long",
                )
            ]
        stripped = line.strip()
        if not stripped:
            return []
        try:
            obj = loads(stripped)
        except BadJson:
            return [bad_line(stripped)]
        if not isinstance(obj, dict):
            return [bad_line(stripped)]
        kind = obj.get("type")
        if kind == "control_response":
            response = obj.get("response")
            self._resolve(response if isinstance(response, dict) else {})
            return []
        if kind == "control_request":
            request = obj.get("request")
            subtype = request.get("subtype") if isinstance(request, dict) else None
            request_id = obj.get("request_id")
            if subtype != "can_use_tool" and isinstance(request_id, str):
                error = f"corral does not handle {subtype!r}"
                self._actions.append(lambda: self._error_reply(request_id, error))
        events = self.review(self.parser.feed(obj))
        for event in events:
            if isinstance(event, Usage):
                self._usage.add(event)
        sid = self.parser.session_id
        if sid and sid != self.agent_session_id:
            self.agent_session_id = sid
            if self.on_session_id is not None:
                self.on_session_id(sid)
        return events

    def _resolve(self, response: dict[str, Any]) -> None:
        request_id = response.get("request_id")
        if not isinstance(request_id, str):
            return
        if response.get("subtype") == "error":
            self._calls.reject(request_id, ProtocolError(f"agent refused: {response.get('error')}"))
        else:
            self._calls.resolve(request_id, response.get("response"))

    async def _error_reply(self, request_id: str, error: str) -> None:
        with contextlib.suppress(ProcessError, SessionError):
            await self._write(
                {
                    "type": "control_response",
                    "response": {"subtype": "error", "request_id": request_id, "error": error},
                }
            )

    async def _finish(self, transport: LineTransport) -> None:
        if self._restart_on_exit:
            await self._restart_after_exit(transport)
            return
        for event in self.parser.finish():
            await self._queue.put(event)
        try:
            code: int | None = await transport.wait(self.stop_grace)
        except TimeoutError:
            code = await transport.kill()
        self._ended = True
        tail = transport.stderr_tail.strip() or None
        if transport.killed_by_us:
            ended = SessionEnded(reason=EndReason.KILLED, exit_code=code, stderr_tail=tail)
        elif code == 0:
            ended = SessionEnded(reason=EndReason.COMPLETED, exit_code=0)
        else:
            ended = SessionEnded(
                reason=EndReason.FAILED,
                exit_code=code,
                message=f"{self.display_name} exited with code {code}",
                stderr_tail=tail,
            )
        self._calls.fail_all(
            ProcessError(f"{self.display_name} exited", code, transport.stderr_tail)
        )
        await self._queue.put(ended)
        await self._queue.put(_END)

    # ── restart (for CLIs whose interrupt ends the process) ──
    async def _restart_after_exit(self, transport: LineTransport) -> None:
        """The process exited because we interrupted it: end the turn ``cancelled`` and resume."""
        self._restart_on_exit = False
        with contextlib.suppress(TimeoutError):
            await transport.wait(self.stop_grace)
        self._calls.fail_all(
            ProcessError(
                f"{self.display_name} restarted", transport.returncode, transport.stderr_tail
            )
        )
        for event in self.parser.cancel_turn():
            await self._queue.put(event)
        self._restart_task = asyncio.create_task(self._restart(), name=f"{self.agent_id}-restart")

    async def _restart(self) -> None:
        request = replace(
            self.launch_request(), resume=self.agent_session_id or self.resume_session_id
        )
        try:
            await self._spawn(request)
        except (ProtocolError, ProcessError, SessionError) as exc:
            await self._queue.put(
                ErrorEvent(message=f"could not resume after the interrupt: {exc}", fatal=True)
            )
            await self._queue.put(SessionEnded(reason=EndReason.FAILED, message=str(exc)))
            await self._queue.put(_END)
            raise

    async def _await_restart(self) -> None:
        task = self._restart_task
        if task is not None:
            await asyncio.shield(task)

    async def _teardown(self) -> None:
        if self.transport is not None:
            await self.transport.kill()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._reader, self.stop_grace)
