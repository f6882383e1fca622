"""A resume that never lies: check the vendor's stored session before continuing it.

Before corral resumes an agent session (``SessionManager.resume``, the hand-off's take-over,
``corral run --resume``) it looks the session up in the vendor's own store through the adapter's
``scan_external_sessions`` hook and refuses, with :class:`~corral.errors.ResumeRefused`, when

* the store has no session with that id (``vendor_session_lost``: deleted, or another home);
* the stored session records another project directory (``vendor_session_elsewhere``);
* the last turn corral saw — the last prompt it delivered, or else the last reply it recorded —
  is not in the stored transcript (``vendor_session_diverged``: another conversation's file);
* corral holds a conversation but never learnt the agent's id (``vendor_session_unknown``).

A refusal never falls back to "the newest session in the directory" and never starts an empty
one silently: it says what is wrong and offers a fresh session carrying a summary of what corral
recorded (:func:`summary_prompt`; ``corral sessions resume ID --fresh``).

An adapter without a store reader (``scan_external_sessions`` unsupported) is not checked; the
vendor's own ``--resume`` is then the only guard. The transcript check reads at most the last
:data:`TAIL_BYTES` of a transcript *file*; a store whose entry is not a file (a database key) is
checked by id and directory only.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ..adapters._handoff import ExternalSession, HandoffHooks
from ..errors import ResumeRefused, UnsupportedOperation
from ..events import Envelope, StatusChanged, TextComplete
from ._models import SessionRecord, SessionSpec

if TYPE_CHECKING:
    from ._manager import SessionManager

TAIL_BYTES = 16 * 1024 * 1024
_SNIPPET = 80
_PROMPT_SEEN = frozenset({"prompt.delivered", "prompt.external"})
_SPLIT = re.compile(r"[\"\\\x00-\x1f\x7f]+")


def store_env(cls: type) -> Mapping[str, str] | None:
    """The environment the adapter's CLI runs with, for its store: ``store_env`` on the class (a
    mapping, or a callable returning one), overlaid on this process's; ``None`` = this process's."""
    extra = getattr(cls, "store_env", None)
    if callable(extra):  # computed when needed (the demo's redirected home)
        extra = extra()
    if not extra:
        return None
    return {**os.environ, **extra}


def find_vendor_session(
    cls: type[HandoffHooks], sid: str, *, env: Mapping[str, str] | None
) -> ExternalSession | None:
    """The store entry of ``sid``; raises ``UnsupportedOperation`` when the adapter has no reader."""
    for entry in cls.scan_external_sessions(env=env):
        if entry.sid == sid:
            return entry
    return None


def last_seen_turn(events: Sequence[Envelope]) -> str | None:
    """The last prompt in ``events`` — delivered by corral, or seen in a terminal's transcript
    (``prompt.external``, mirrored) — else the last complete reply corral recorded."""
    reply: str | None = None
    for envelope in reversed(events):
        event = envelope.event
        if isinstance(event, StatusChanged) and event.status in _PROMPT_SEEN:
            text = (event.raw or {}).get("text")
            if isinstance(text, str) and text.strip():
                return text
        elif reply is None and isinstance(event, TextComplete) and event.text.strip():
            reply = event.text
    return reply


def snippet(text: str) -> str | None:
    """The longest run of ``text`` that a JSON store keeps byte for byte (no quote, no escape)."""
    runs = [run.strip() for run in _SPLIT.split(text)]
    best = max(runs, key=len, default="")[:_SNIPPET].strip()
    return best if len(best) >= 4 else None


def transcript_contains(path: str, text: str) -> bool | None:
    """Whether the transcript file at ``path`` holds ``text``; ``None`` when it cannot tell."""
    piece = snippet(text)
    if piece is None or not os.path.isfile(path):
        return None
    needles = {piece.encode(), json.dumps(piece)[1:-1].encode()}
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - TAIL_BYTES))
            data = fh.read(TAIL_BYTES)
    except OSError:
        return None
    return any(needle in data for needle in needles)


def offer_for(session_id: str) -> str:
    return (
        f"start a fresh session carrying a summary: corral sessions resume {session_id} --fresh"
        f' (API: POST /api/sessions/{session_id}/resume {{"fresh": true}})'
    )


def check_resume(
    cls: type[HandoffHooks],
    *,
    session_id: str,
    agent_sid: str | None,
    cwd: str | None,
    events: Sequence[Envelope],
    offer: str | None = None,
) -> ExternalSession | None:
    """Refuse (``ResumeRefused``) unless ``agent_sid`` is the stored conversation corral knows.

    Returns the store entry, or ``None`` when the adapter has no store reader (unchecked)."""
    offer = offer or offer_for(session_id)
    seen = last_seen_turn(events)
    env = store_env(cls)
    if agent_sid is None:
        if seen is None:
            return None  # nothing was said yet: a new agent session loses nothing
        try:
            cls.scan_external_sessions(env=env)
        except UnsupportedOperation:
            return None
        raise ResumeRefused(
            f"session {session_id} has a conversation but corral never learnt the agent's"
            " session id, so it cannot be resumed without starting over",
            session_id,
            code="vendor_session_unknown",
            offer=offer,
        )
    try:
        entry = find_vendor_session(cls, agent_sid, env=env)
    except UnsupportedOperation:
        return None
    if entry is None:
        raise ResumeRefused(
            f"the agent's stored session {agent_sid} is gone (not in its store any more);"
            " resuming would start an empty conversation",
            session_id,
            code="vendor_session_lost",
            offer=offer,
        )
    if cwd is not None and entry.cwd is not None and not _same_dir(cwd, entry.cwd):
        raise ResumeRefused(
            f"the agent's stored session {agent_sid} belongs to {entry.cwd}, not {cwd};"
            " corral will not adopt another project's conversation",
            session_id,
            code="vendor_session_elsewhere",
            offer=offer,
        )
    if seen is not None and transcript_contains(entry.path, seen) is False:
        raise ResumeRefused(
            f"the agent's stored session {agent_sid} does not contain the last turn corral saw;"
            " it is another conversation",
            session_id,
            code="vendor_session_diverged",
            offer=offer,
        )
    return entry


def _same_dir(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def summary_prompt(events: Sequence[Envelope], *, limit: int = 4000) -> str:
    """A first prompt for a fresh session: what corral recorded of the lost conversation."""
    lines: list[str] = []
    for envelope in events:
        event = envelope.event
        if isinstance(event, StatusChanged) and event.status in _PROMPT_SEEN:
            text = (event.raw or {}).get("text")
            if isinstance(text, str):
                lines.append(f"User: {_one_line(text)}")
        elif isinstance(event, TextComplete) and event.text.strip():
            lines.append(f"Agent: {_one_line(event.text)}")
    body = "\n".join(lines)
    if len(body) > limit:
        body = "…\n" + body[-limit:]
    return (
        "This continues an earlier conversation whose history the agent no longer has. "
        "What corral recorded of it:\n" + (body or "(nothing)") + "\nPlease continue from there."
    )


async def fresh_session(manager: SessionManager, session_id: str) -> SessionRecord:
    """The refusal's offer: a new session with the same settings whose first prompt is a summary
    of what corral recorded of ``session_id`` (which stays as it was)."""
    old = manager.get_session(session_id)
    spec = SessionSpec(
        adapter_id=old.adapter_id,
        model=old.model,
        effort=old.effort,
        cwd=old.cwd,
        intent=old.intent,
        allowed_commands=old.allowed_commands,
    )
    record = await manager.create_session(spec)
    manager.send(record.id, summary_prompt(manager.events(session_id)))
    return manager.get_session(record.id)


def _one_line(text: str, width: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


__all__ = [
    "check_resume",
    "find_vendor_session",
    "fresh_session",
    "last_seen_turn",
    "offer_for",
    "store_env",
    "summary_prompt",
    "transcript_contains",
]
