"""Pending ``session/request_permission`` requests of one ACP session and how they are answered.

Each request gets corral's own id (``perm-N``; the JSON-RPC id stays inside the client). An answer
picks the agent's *own* option: the explicit ``option_id`` if given, else the first option whose
ACP kind matches the decision (allow: ``allow_once`` then ``allow_always``; allow always: the
reverse; deny: ``reject_once`` then ``reject_always``). ``CANCEL`` — and every request still
pending when the turn is cancelled or the session stops — is answered ``{"outcome": "cancelled"}``.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from typing import Any

from ..errors import SessionError
from ..events import ApprovalDecision

CANCELLED: dict[str, Any] = {"outcome": "cancelled"}

_KINDS: dict[ApprovalDecision, tuple[str, ...]] = {
    ApprovalDecision.ALLOW: ("allow_once", "allow_always"),
    ApprovalDecision.ALLOW_ALWAYS: ("allow_always", "allow_once"),
    ApprovalDecision.DENY: ("reject_once", "reject_always"),
}


def choose_option(options: Sequence[dict[str, Any]], decision: ApprovalDecision) -> str:
    """The agent's option id for ``decision``; ``ValueError`` when it offered none."""
    for kind in _KINDS[decision]:
        for opt in options:
            if opt.get("kind") == kind and opt.get("optionId") is not None:
                return str(opt["optionId"])
    raise ValueError(f"the agent offered no option for {decision.value}")


class Permissions:
    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._pending: dict[str, tuple[asyncio.Future[dict[str, Any]], list[dict[str, Any]]]] = {}

    def open(self, params: dict[str, Any]) -> tuple[str, asyncio.Future[dict[str, Any]]]:
        """Register a request; returns its id and the future its outcome will land in."""
        request_id = f"perm-{next(self._ids)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        options = [o for o in params.get("options") or [] if isinstance(o, dict)]
        self._pending[request_id] = (future, options)
        return request_id, future

    def close(self, request_id: str) -> None:
        self._pending.pop(request_id, None)

    def answer(
        self, request_id: str, decision: ApprovalDecision, option_id: str | None = None
    ) -> None:
        entry = self._pending.get(request_id)
        if entry is None or entry[0].done():
            raise SessionError(f"no pending approval request {request_id!r}")
        future, options = entry
        if decision is ApprovalDecision.CANCEL:
            future.set_result(dict(CANCELLED))
            return
        chosen = option_id or choose_option(options, decision)
        future.set_result({"outcome": "selected", "optionId": chosen})

    def cancel_all(self) -> None:
        for future, _ in list(self._pending.values()):
            if not future.done():
                future.set_result(dict(CANCELLED))
