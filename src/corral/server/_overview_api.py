"""``GET /api/overview``: every session with what the session list shows and what needs the user.

For each session: its record, the approvals and questions still pending, whether the last turn
finished or failed (``last_turn``), the usage summed over the transcript (tokens and cost), the
number of turns, and the time of its last event. It is a projection of the stored transcript, kept
per session and advanced only over the envelopes added since the last request, so a poll costs the
new events, not the whole history.

``attention`` is the reason the session wants the user, most urgent first: ``approval``,
``question``, ``failed`` (session or last turn), ``finished`` (the last turn ended and nothing is
queued or running), else ``null``. A page decides for itself whether it has shown ``finished``.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..events import (
    ApprovalRequested,
    ApprovalResolved,
    Envelope,
    QuestionAnswered,
    QuestionAsked,
    SessionEnded,
    TurnCompleted,
    Usage,
)
from ..sessions import SessionManager, SessionRecord, SessionState
from ._responses import json_response

CHUNK = 500
"""Envelopes folded per step of the projection."""


class Totals(msgspec.Struct, kw_only=True):
    """What the projection keeps per session between polls."""

    seq: int = 0
    approvals: list[str] = msgspec.field(default_factory=list)
    questions: list[str] = msgspec.field(default_factory=list)
    last_turn: str | None = None
    last_turn_seq: int = 0
    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    last_activity: datetime | None = None


class SessionOverview(msgspec.Struct, frozen=True, kw_only=True):
    session: SessionRecord
    attention: str | None
    pending_approvals: int
    pending_questions: int
    last_turn: str | None
    """``end_turn``, ``cancelled``, ``error``… (the last turn's stop reason), or ``killed`` etc."""
    last_turn_seq: int
    turns: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    last_activity: datetime | None


def advance(totals: Totals, envelopes: list[Envelope]) -> None:
    """Fold ``envelopes`` (in seq order, after ``totals.seq``) into ``totals``."""
    for env in envelopes:
        if env.seq <= totals.seq:
            continue
        totals.seq = env.seq
        totals.last_activity = env.ts
        match env.event:
            case ApprovalRequested(request_id=rid):
                totals.approvals.append(rid)
            case ApprovalResolved(request_id=rid) if rid in totals.approvals:
                totals.approvals.remove(rid)
            case QuestionAsked(request_id=rid):
                totals.questions.append(rid)
            case QuestionAnswered(request_id=rid) if rid in totals.questions:
                totals.questions.remove(rid)
            case TurnCompleted(stop_reason=stop):
                totals.approvals.clear()
                totals.questions.clear()
                totals.turns += 1
                totals.last_turn, totals.last_turn_seq = stop.value, env.seq
            case SessionEnded(reason=reason):
                totals.approvals.clear()
                totals.questions.clear()
                totals.last_turn, totals.last_turn_seq = reason.value, env.seq
            case Usage(input_tokens=i, output_tokens=o, cost_usd=c):
                totals.input_tokens += i or 0
                totals.output_tokens += o or 0
                if c is not None:
                    totals.cost_usd = (totals.cost_usd or 0.0) + c


def attention(record: SessionRecord, totals: Totals, queued: int) -> str | None:
    if totals.approvals:
        return "approval"
    if totals.questions:
        return "question"
    if record.state == SessionState.FAILED or totals.last_turn in ("error", "failed"):
        return "failed"
    if totals.last_turn is not None and record.state != SessionState.BUSY and not queued:
        return "finished"
    return None


async def overview(manager: SessionManager, cache: dict[str, Totals]) -> list[SessionOverview]:
    out: list[SessionOverview] = []
    for record in manager.list_sessions():
        totals = cache.setdefault(record.id, Totals())
        while record.last_seq > totals.seq:
            # In chunks, yielding between them: a long history never stalls the event loop.
            chunk = manager.store.events(record.id, after=totals.seq, limit=CHUNK)
            if not chunk:
                break
            advance(totals, chunk)
            await asyncio.sleep(0)
        counts = manager.queue.counts(record.id)
        queued = counts.get("queued", 0) + counts.get("sending", 0)
        out.append(
            SessionOverview(
                session=record,
                attention=attention(record, totals, queued),
                pending_approvals=len(totals.approvals),
                pending_questions=len(totals.questions),
                last_turn=totals.last_turn,
                last_turn_seq=totals.last_turn_seq,
                turns=totals.turns,
                input_tokens=totals.input_tokens,
                output_tokens=totals.output_tokens,
                cost_usd=totals.cost_usd,
                last_activity=totals.last_activity or record.updated_at,
            )
        )
    out.sort(key=lambda o: o.last_activity or o.session.updated_at, reverse=True)
    return out


async def get_overview(request: Request) -> Response:
    state = request.app.state
    cache: dict[str, Totals] | None = getattr(state, "overview_cache", None)
    if cache is None:
        cache = state.overview_cache = {}
    return json_response(await overview(state.manager, cache))


ROUTES = [Route("/api/overview", get_overview, methods=["GET"])]

OPENAPI_TYPES: tuple[Any, ...] = (SessionOverview,)
