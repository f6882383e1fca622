"""Seed 003's hand-off hooks: the seam between a terminal-driven session and corral.

One writer, many observers. An adapter opts in by overriding the class methods of
:class:`HandoffHooks` (``BaseAdapter`` inherits them); each default raises
:class:`~corral.errors.UnsupportedOperation` naming the hook, so an adapter that does
nothing is simply out of hand-off, and nobody mistakes "unsupported" for "no sessions".

Every hook reads the vendor's own on-disk store. Where that store lives depends on the
environment the CLI runs with (``HOME``, ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME`` …), so each
hook takes ``env``: the environment to resolve the store from (``None`` = this process's).

Store contents are agent output: untrusted. A reader skips what it cannot read (and may
say so through ``ExternalSession.problem``); it never raises past the hook except
``UnsupportedOperation``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from typing import ClassVar, Literal, Protocol

import msgspec

from ..errors import UnsupportedOperation
from ..events import Event

#: How an agent holds a conversation between turns (seed 003's table).
#: ``per-turn``: a process per turn, so a terminal may resume between turns;
#: ``persistent``: a long-lived process or server that must be released first.
HandoffKind = Literal["per-turn", "persistent"]


class ExternalSession(msgspec.Struct, frozen=True, kw_only=True):
    """A session found in a vendor's store, started outside corral or inside it."""

    agent_id: str
    #: The vendor's own session id (what ``--resume`` takes).
    sid: str
    #: The absolute project directory the transcript records (``None`` when it does not).
    cwd: str | None
    #: The transcript file (or store key) the entry was read from.
    path: str
    #: Modification time (seconds since the epoch) and size in bytes of ``path``.
    mtime: float
    size: int
    #: The first user prompt, shortened to one line (``None`` when headers-only reading found none).
    title: str | None = None
    #: Set when the file could not be read fully; the entry is still listed.
    problem: str | None = None


class TranscriptMirror(Protocol):
    """A read-only live tail of a vendor transcript, as corral events. Never writes."""

    def events(self) -> AsyncIterator[Event]:
        """Events already in the transcript, then new ones as the file grows, until ``close``."""
        ...

    async def close(self) -> None: ...


def _unsupported(cls: type, hook: str) -> UnsupportedOperation:
    name = getattr(cls, "agent_id", cls.__name__)
    return UnsupportedOperation(str(name), f"session hand-off ({hook})")


class HandoffHooks:
    """Optional hand-off hooks with "unsupported" defaults (mixed into ``BaseAdapter``)."""

    #: ``None``: the adapter takes no part in hand-off.
    handoff_kind: ClassVar[HandoffKind | None] = None

    @classmethod
    def scan_external_sessions(
        cls, *, env: Mapping[str, str] | None = None, since: float | None = None
    ) -> Iterator[ExternalSession]:
        """Sessions in the vendor's store whose transcript changed after ``since`` (mtime)."""
        raise _unsupported(cls, "scan_external_sessions")

    @classmethod
    def is_cwd_externally_owned(
        cls, cwd: str, sid: str | None, *, env: Mapping[str, str] | None = None
    ) -> bool:
        """Whether a native process is driving ``sid`` (or, with ``sid=None``, ``cwd``) now."""
        raise _unsupported(cls, "is_cwd_externally_owned")

    @classmethod
    def make_transcript_mirror(
        cls, cwd: str, sid: str, *, env: Mapping[str, str] | None = None
    ) -> TranscriptMirror:
        """A read-only tail of ``sid``'s transcript, normalised into corral events."""
        raise _unsupported(cls, "make_transcript_mirror")

    @classmethod
    def latest_sid_for_cwd(cls, cwd: str, *, env: Mapping[str, str] | None = None) -> str | None:
        """The newest session id of ``cwd``'s lineage (a terminal ``--resume`` may mint a new one)."""
        raise _unsupported(cls, "latest_sid_for_cwd")

    @classmethod
    def terminal_resume_command(cls, sid: str, *, cwd: str, binary: str | None = None) -> list[str]:
        """The argv that resumes ``sid`` in a terminal, run from ``cwd``."""
        raise _unsupported(cls, "terminal_resume_command")

    @classmethod
    def supports_handoff(cls) -> bool:
        return cls.handoff_kind is not None
