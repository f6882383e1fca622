"""Drive a real adapter the way the recorded session was driven, over a :class:`Recording`.

The recording says what the client did: the harness looks at the next line the driver is expected
to write and, when that line is the user's doing (a prompt, an interrupt, an approval answer), does
the same through the adapter's public API; every other line (handshake, control replies, restarts)
the driver must write by itself. Events are collected until ``SessionEnded``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from corral.adapters.base import BaseAdapter, iter_events
from corral.events import ApprovalDecision, ApprovalRequested, Event, QuestionAsked, SessionEnded
from corral.testing import Recording

ROOT = Path(__file__).parents[2] / "fixtures" / "transcripts"
WAIT = 15.0

Action = tuple[str, Any] | None
"""``("prompt", text)``, ``("interrupt", None)``, ``("answer", key)``, ``("question", answers)``
or ``None`` (a line the driver writes on its own)."""


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _texts(blocks: Any) -> str:
    return "".join(
        str(b.get("text", ""))
        for b in blocks or ()
        if isinstance(b, dict) and b.get("type") == "text"
    )


def claude_action(line: Any) -> Action:
    msg = _d(line)
    if msg.get("type") == "user":
        return ("prompt", _texts(_d(msg.get("message")).get("content")))
    if (
        msg.get("type") == "control_request"
        and _d(msg.get("request")).get("subtype") == "interrupt"
    ):
        return ("interrupt", None)
    inner = _d(_d(msg.get("response")).get("response"))
    answers = _d(inner.get("updatedInput")).get("answers")
    if msg.get("type") == "control_response" and isinstance(answers, dict):
        return ("question", answers)
    if msg.get("type") == "control_response" and "behavior" in inner:
        return ("answer", inner["behavior"])
    return None


def acp_action(line: Any) -> Action:
    msg = _d(line)
    if msg.get("method") == "session/prompt":
        return ("prompt", _texts(_d(msg.get("params")).get("prompt")))
    if msg.get("method") == "session/cancel":
        return ("interrupt", None)
    outcome = _d(_d(msg.get("result")).get("outcome"))
    if "method" not in msg and outcome:
        return ("answer", outcome.get("optionId") or outcome.get("outcome"))
    return None


def codex_action(line: Any) -> Action:
    msg = _d(line)
    if msg.get("method") in ("turn/start", "turn/steer"):
        return ("prompt", _texts(_d(msg.get("params")).get("input")))
    if msg.get("method") == "turn/interrupt":
        return ("interrupt", None)
    decision = _d(msg.get("result")).get("decision")
    if "method" not in msg and decision == "cancel":
        return None  # the driver withdraws a pending approval itself when the turn is interrupted
    if "method" not in msg and decision is not None:
        return ("answer", decision)
    return None


def pi_action(line: Any) -> Action:
    msg = _d(line)
    if msg.get("type") in ("prompt", "steer", "follow_up"):
        return ("prompt", str(msg.get("message", "")))
    if msg.get("type") == "abort":
        return ("interrupt", None)
    return None


_DECISIONS = {
    "allow": ApprovalDecision.ALLOW,
    "deny": ApprovalDecision.DENY,
    "accept": ApprovalDecision.ALLOW,
    "decline": ApprovalDecision.DENY,
    "cancel": ApprovalDecision.CANCEL,
    "cancelled": ApprovalDecision.CANCEL,
}


async def answer(adapter: Any, request: ApprovalRequested, key: Any) -> None:
    """Answer ``request`` the way the recording did: by option id, else by decision name."""
    for option in request.options:
        if option.id == key:
            await adapter.respond_approval(request.request_id, option.decision, option_id=option.id)
            return
    await adapter.respond_approval(request.request_id, _DECISIONS[str(key)])


async def replay_session(
    adapter: BaseAdapter,
    recording: Recording,
    action: Callable[[Any], Action],
    *,
    session_id: str = "replay",
    stop: bool = True,
) -> list[Event]:
    """Run ``adapter`` over ``recording`` and return every event up to ``SessionEnded``."""
    adapter.transport_factory = recording.factory  # type: ignore[attr-defined]
    events: list[Event] = []
    approvals: asyncio.Queue[ApprovalRequested] = asyncio.Queue()
    questions: asyncio.Queue[QuestionAsked] = asyncio.Queue()
    ended = asyncio.Event()

    async def collect() -> None:
        async for event in iter_events(adapter):
            events.append(event)
            if isinstance(event, ApprovalRequested):
                approvals.put_nowait(event)
            elif isinstance(event, QuestionAsked):
                questions.put_nowait(event)
        ended.set()

    await asyncio.wait_for(adapter.start(session_id), WAIT)
    reader = asyncio.create_task(collect())
    done: set[tuple[int, int]] = set()  # (process, write number) already acted on
    try:
        async with asyncio.timeout(WAIT * 4):
            while not ended.is_set():
                transport = recording.transports[-1]
                pending = transport.pending_write
                step = (len(recording.transports), len(transport.written))
                todo = action(pending) if pending is not None and step not in done else None
                if (
                    todo is not None
                    and todo[0] in ("prompt", "interrupt")
                    and not transport.caught_up
                ):
                    # the user acted after reading what came before: wait for the driver to read it
                    await transport.progressed(0.05)
                    continue
                if todo is not None:
                    done.add(step)
                if pending is None:
                    last = len(recording.transports) == len(recording.segments)
                    if transport.consumed and last and stop:
                        break
                    await transport.progressed(0.05)
                elif todo is None:
                    await transport.progressed(0.05)
                elif todo[0] == "prompt":
                    await asyncio.sleep(0.05)  # as for an interrupt: the events come first
                    await adapter.send(todo[1])
                    await transport.progressed(0.05)
                elif todo[0] == "interrupt":
                    await asyncio.sleep(0.05)  # let the driver turn what it read into events
                    await adapter.interrupt()  # type: ignore[attr-defined]
                    await transport.progressed(0.05)
                elif todo[0] == "question":
                    asked = await asyncio.wait_for(questions.get(), WAIT)
                    await adapter.answer_question(asked.request_id, todo[1])  # type: ignore[attr-defined]
                    await transport.progressed(0.05)
                else:
                    request = await asyncio.wait_for(approvals.get(), WAIT)
                    await answer(adapter, request, todo[1])
                    await transport.progressed(0.05)
        if stop and not ended.is_set():
            await asyncio.wait_for(adapter.stop(), WAIT)
        await asyncio.wait_for(ended.wait(), WAIT)
    finally:
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
        with contextlib.suppress(Exception):
            await asyncio.wait_for(adapter.stop(), WAIT)
    assert isinstance(events[-1], SessionEnded), events[-3:]
    return events
