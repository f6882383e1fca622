"""A scripted in-process adapter for testing sessions, queues and surfaces without a real CLI.

It implements the four coroutines of :class:`~corral.adapters.base.BaseAdapter` plus every optional
surface of :mod:`corral.sessions` (approvals, questions, interrupt, an explicit ack point, status).
What a turn does is scripted by :class:`ScriptConfig` and by directives inside the prompt text:

``[approve]``   ask for approval of a ``Bash`` call first; run it only when allowed
``[ask]``       ask a question first and reply with the answer
``[hang]``      never finish on its own: the turn ends only when interrupted
``[fail-send]`` ``send()`` raises before accepting the prompt
``[crash]``     the session's event stream breaks (a process failure)

Otherwise the reply is the next of ``config.replies`` or ``echo: <prompt>``. The adapter appends each
prompt it accepts to ``config.received_log`` (one JSON line) — the "provider's" ground truth a crash
test compares the queue with. Its ack point is that write: with ``ack_mode="hook"`` it calls the
session layer's ack hook right after it; with ``"return"`` the ack is ``send_acknowledged`` returning.

Configure a subclass with :meth:`ScriptedAdapter.configured`, or, across processes, through the
``CORRAL_SCRIPTED_CONFIG`` environment variable (a JSON :class:`ScriptConfig`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, ClassVar, Literal, Unpack

import msgspec

from ..adapters._options import LaunchArgs
from ..adapters.base import Attachment, BaseAdapter
from ..events import (
    AgentInfo,
    ApprovalDecision,
    ApprovalOption,
    ApprovalRequested,
    ApprovalResolved,
    Event,
    Question,
    QuestionAnswered,
    QuestionAsked,
    StopReason,
    TextComplete,
    TextDelta,
    ToolCallCompleted,
    ToolCallFailed,
    ToolCallStarted,
    ToolKind,
    ToolResult,
    TurnCompleted,
)

CONFIG_ENV = "CORRAL_SCRIPTED_CONFIG"


class ScriptConfig(msgspec.Struct, frozen=True, kw_only=True):
    replies: tuple[str, ...] = ()
    """Replies used in order, one per turn; after them, ``echo: <prompt>``."""
    send_delay: float = 0.0
    """Seconds ``send`` takes before the agent "receives" the prompt."""
    ack_delay: float = 0.0
    """Seconds between receiving the prompt and the ack point."""
    chunk_delay: float = 0.0
    """Seconds between streamed reply chunks."""
    chunks: int = 1
    """How many ``TextDelta`` chunks a reply is split into."""
    received_log: str | None = None
    """Append-only file of every accepted prompt (JSON lines): the provider's ground truth."""
    ack_mode: Literal["return", "hook"] = "hook"
    fail_start: bool = False


_END = object()


class ScriptedAdapter(BaseAdapter):
    agent_id = "scripted"
    display_name = "Scripted test agent"
    provides_models = False
    provides_usage = False
    cap_resume = True
    cap_permissions = True
    cap_interact = True
    cap_cancel = True
    cap_image_input = True

    config: ClassVar[ScriptConfig | None] = None

    supported_options = frozenset({"cwd", "model", "resume_session_id", "on_session_id", "effort"})

    def __init__(self, **launch: Unpack[LaunchArgs]) -> None:
        self.take_options(launch)
        self.cfg = self.config or _env_config()
        self.received: list[str] = []
        self.agent_session_id: str | None = None
        self._replies = iter(self.cfg.replies)
        self._events: asyncio.Queue[Any] = asyncio.Queue()
        self._turns: asyncio.Queue[str] = asyncio.Queue()
        self._current: asyncio.Task[None] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._waiting: dict[str, asyncio.Future[Any]] = {}
        self._ids = itertools.count(1)
        self._closed = False

    @classmethod
    def configured(cls, **fields: Any) -> type[ScriptedAdapter]:
        """A subclass with its own :class:`ScriptConfig` (so tests never share state)."""
        config = ScriptConfig(**fields)
        return type(cls.__name__, (cls,), {"config": config, "__module__": cls.__module__})

    # ── the contract ──
    async def start(self, session_id: str) -> AgentInfo:
        if self.cfg.fail_start:
            raise RuntimeError("scripted start failure")
        self.agent_session_id = self.resume_session_id or f"scripted-{uuid.uuid4().hex[:12]}"
        if self.on_session_id is not None:
            self.on_session_id(self.agent_session_id)
        self._worker = asyncio.create_task(self._run_turns())
        return self.make_agent_info(
            version="1.0", model=self.model, agent_session_id=self.agent_session_id
        )

    async def send(self, text: str, attachments: Sequence[Attachment] | None = None) -> None:
        await self.send_acknowledged(text, attachments, ack=lambda: None)

    async def send_acknowledged(
        self, text: str, attachments: Sequence[Attachment] | None, *, ack: Callable[[], None]
    ) -> None:
        if "[fail-send]" in text:
            raise ConnectionError("scripted send failure")
        if self.cfg.send_delay:
            await asyncio.sleep(self.cfg.send_delay)
        self._record(text, attachments)
        if self.cfg.ack_delay:
            await asyncio.sleep(self.cfg.ack_delay)
        if self.cfg.ack_mode == "hook":
            ack()
        self._turns.put_nowait(text)

    async def stream(self) -> AsyncIterator[Event]:
        while not self._closed:
            item = await self._events.get()
            if item is _END:
                self._closed = True
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    async def stop(self) -> None:
        if self._current is not None:
            self._current.cancel()
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
        self._events.put_nowait(_END)

    # ── optional surfaces ──
    async def interrupt(self) -> None:
        if self._current is not None and not self._current.done():
            self._current.cancel()

    async def respond_approval(
        self,
        request_id: str,
        decision: ApprovalDecision,
        *,
        option_id: str | None = None,
        updated_input: Any = None,
        message: str | None = None,
    ) -> None:
        self._resolve(request_id, decision)

    async def answer_question(self, request_id: str, answers: dict[str, str]) -> None:
        self._resolve(request_id, answers)

    async def query_status(self) -> dict[str, Any]:
        busy = self._current is not None and not self._current.done()
        return {"busy": busy, "received": len(self.received), "queued_turns": self._turns.qsize()}

    # ── the scripted agent ──
    def _record(self, text: str, attachments: Sequence[Attachment] | None) -> None:
        self.received.append(text)
        if self.cfg.received_log:
            line = msgspec.json.encode({"text": text, "attachments": len(attachments or ())})
            fd = os.open(self.cfg.received_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line + b"\n")
            finally:
                os.close(fd)

    def _resolve(self, request_id: str, value: Any) -> None:
        fut = self._waiting.pop(request_id, None)
        if fut is None:
            raise KeyError(f"no pending request {request_id!r}")
        if not fut.done():
            fut.set_result(value)

    async def _run_turns(self) -> None:
        while True:
            text = await self._turns.get()
            self._current = asyncio.create_task(self._turn(text))
            await asyncio.wait({self._current})
            if self._current.cancelled():
                self._events.put_nowait(TurnCompleted(stop_reason=StopReason.CANCELLED))
            elif (exc := self._current.exception()) is not None:
                self._events.put_nowait(exc)
                return

    async def _wait_for(self, request_id: str) -> Any:
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = fut
        try:
            return await fut
        finally:
            self._waiting.pop(request_id, None)

    async def _turn(self, text: str) -> None:
        put = self._events.put_nowait
        if "[crash]" in text:
            raise RuntimeError("scripted agent crashed")
        reply = next(self._replies, None) or f"echo: {text}"
        if "[approve]" in text:
            rid = f"approval-{next(self._ids)}"
            call_id = f"call-{rid}"
            put(
                ApprovalRequested(
                    request_id=rid,
                    tool_name="Bash",
                    kind=ToolKind.COMMAND,
                    cmd="echo approved",
                    call_id=call_id,
                    options=(
                        ApprovalOption(id="yes", label="Allow", decision=ApprovalDecision.ALLOW),
                        ApprovalOption(id="no", label="Deny", decision=ApprovalDecision.DENY),
                    ),
                )
            )
            decision = ApprovalDecision(await self._wait_for(rid))
            put(ApprovalResolved(request_id=rid, decision=decision))
            put(ToolCallStarted(call_id=call_id, name="Bash", kind=ToolKind.COMMAND))
            if decision in (ApprovalDecision.ALLOW, ApprovalDecision.ALLOW_ALWAYS):
                put(ToolCallCompleted(call_id=call_id, result=ToolResult(output="approved\n")))
            else:
                put(ToolCallFailed(call_id=call_id, error="denied by the user", denied=True))
                reply = "the command was denied"
        if "[ask]" in text:
            rid = f"question-{next(self._ids)}"
            question = Question(question="Which colour?", options=("red", "blue"))
            put(QuestionAsked(request_id=rid, questions=(question,)))
            answers: dict[str, str] = await self._wait_for(rid)
            put(QuestionAnswered(request_id=rid, answers=answers))
            reply = f"you chose {answers.get(question.question, '?')}"
        if "[hang]" in text:
            await asyncio.Event().wait()
        size = max(1, -(-len(reply) // max(1, self.cfg.chunks)))
        for i in range(0, len(reply), size):
            if self.cfg.chunk_delay:
                await asyncio.sleep(self.cfg.chunk_delay)
            put(TextDelta(text=reply[i : i + size], message_id="m"))
        put(TextComplete(text=reply, message_id="m"))
        put(TurnCompleted(result_text=reply))


def _env_config() -> ScriptConfig:
    raw = os.environ.get(CONFIG_ENV)
    return msgspec.json.decode(raw, type=ScriptConfig) if raw else ScriptConfig()
