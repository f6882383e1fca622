"""The attention webhook: the events that want the user, POSTed as JSON to a configured URL.

A tap on the session hub (:attr:`corral.sessions.SessionManager.hub`) sees every envelope; the
ones that make a session want the user become an :class:`AttentionEvent`, the same four reasons
the page shows (``approval``, ``question``, ``finished``, ``failed``; see ``_overview_api``).

Posts are fire-and-forget: the tap only schedules a task, each POST is bounded by
:data:`POST_TIMEOUT`, at most :data:`MAX_IN_FLIGHT` run at once (more are dropped and counted),
and no failure reaches a session. The body is redacted (:func:`corral._redact.redact`) before it
leaves, and so is the last delivery's error kept for the settings page.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

import msgspec

from .._redact import redact
from ..events import (
    ApprovalRequested,
    EndReason,
    Envelope,
    QuestionAsked,
    SessionEnded,
    StopReason,
    TurnCompleted,
)

if TYPE_CHECKING:
    import httpx

POST_TIMEOUT = 5.0
MAX_IN_FLIGHT = 16
SUMMARY_LIMIT = 500


class AttentionEvent(msgspec.Struct, frozen=True, kw_only=True):
    type: str = "corral.attention"
    attention: str
    """``approval`` | ``question`` | ``finished`` | ``failed``."""
    session_id: str
    seq: int
    ts: datetime
    event: str
    """The corral event type that raised it (``approval.requested``, ``turn.completed``…)."""
    summary: str
    """One line for a notification: the tool and command, the question, the stop reason."""


class Delivery(msgspec.Struct, kw_only=True):
    """The outcome of the last POST, for the settings page."""

    sent: int = 0
    failed: int = 0
    dropped: int = 0
    last_status: int | None = None
    last_error: str | None = None


def attention_of(env: Envelope) -> AttentionEvent | None:
    """The attention event ``env`` raises, or ``None``."""
    event = env.event
    reason: str
    match event:
        case ApprovalRequested():
            reason = "approval"
            summary = " ".join(x for x in (event.tool_name, event.cmd or event.file or "") if x)
            summary = event.title or summary
        case QuestionAsked():
            reason = "question"
            summary = " / ".join(q.question for q in event.questions)
        case TurnCompleted(stop_reason=StopReason.ERROR):
            reason, summary = "failed", f"turn failed: {event.error or 'error'}"
        case TurnCompleted():
            reason, summary = "finished", f"turn finished ({event.stop_reason.value})"
        case SessionEnded(reason=EndReason.FAILED):
            reason, summary = "failed", f"session failed: {event.message or 'no message'}"
        case _:
            return None
    return AttentionEvent(
        attention=reason,
        session_id=env.session_id,
        seq=env.seq,
        ts=env.ts,
        event=str(event.__struct_config__.tag),
        summary=summary[:SUMMARY_LIMIT],
    )


def payload(event: AttentionEvent) -> bytes:
    """The JSON body, with secrets masked."""
    return redact(msgspec.json.encode(event).decode()).encode()


class Webhook:
    """Posts attention events to ``url_of()`` (read at each event, so a change applies at once)."""

    def __init__(self, url_of: Callable[[], str | None], *, timeout: float = POST_TIMEOUT) -> None:
        self.url_of = url_of
        self.timeout = timeout
        self.delivery = Delivery()
        self._tasks: set[asyncio.Task[None]] = set()
        self._client: httpx.AsyncClient | None = None

    def tap(self, env: Envelope) -> None:
        """The hub tap: never raises, never waits."""
        try:
            url = self.url_of()
            if url is None:
                return
            event = attention_of(env)
            if event is None:
                return
            if len(self._tasks) >= MAX_IN_FLIGHT:
                self.delivery.dropped += 1
                return
            task = asyncio.get_running_loop().create_task(self._post(url, event))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        except Exception as exc:  # a tap must never raise into the session
            self.delivery.failed += 1
            self.delivery.last_error = redact(f"{type(exc).__name__}: {exc}")

    async def _post(self, url: str, event: AttentionEvent) -> None:
        if self._client is None:
            # httpx (with the command line it brings: click, rich, pygments) loads at the first
            # post, not at every `corral serve`'s start (decision 052).
            import httpx

            # No proxies from the environment, no redirects: the body goes where it was told.
            self._client = httpx.AsyncClient(trust_env=False, follow_redirects=False)
        try:
            r = await self._client.post(
                url,
                content=payload(event),
                headers={"Content-Type": "application/json", "User-Agent": "corral-webhook"},
                timeout=self.timeout,
            )
        except Exception as exc:
            self.delivery.failed += 1
            self.delivery.last_status = None
            self.delivery.last_error = redact(f"{type(exc).__name__}: {exc}", extra=[url])
            return
        self.delivery.last_status = r.status_code
        if r.is_success:
            self.delivery.sent += 1
            self.delivery.last_error = None
        else:
            self.delivery.failed += 1
            self.delivery.last_error = f"HTTP {r.status_code}"

    async def drain(self, timeout: float | None = None) -> None:
        """Wait (bounded) for the posts in flight; used by tests and at shutdown."""
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=timeout or self.timeout + 1)

    async def close(self) -> None:
        await self.drain()
        for task in list(self._tasks):
            task.cancel()
        if self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.aclose()
            self._client = None
