"""The terminal side of hand-off, declared as data: who drives a directory, how to resume there.

An adapter class that takes part in hand-off puts :class:`TerminalHandoff` first among its bases
and declares

* ``handoff_kind`` — ``"per-turn"`` or ``"persistent"`` (seed 003; what corral's own driver does
  between turns);
* ``handoff_processes`` — the program names of the vendor's CLI (``claude``, ``codex``, …);
* ``handoff_session_flags`` — the flags (or subcommand) that name a session on its command line,
  so a terminal resuming *another* session in the same directory is told apart;
* ``handoff_resume_args`` — the arguments after the binary that resume a session, with ``{sid}``;
* ``handoff_idle_args`` — arguments that mark the vendor's background helpers, which are not a
  terminal (Codex's managed app-server daemon).

``is_cwd_externally_owned`` is then a ``/proc`` scan (:mod:`corral._process._scan`): a process of
the vendor's CLI, not started by this corral, whose working directory is the project and whose
command line does not name another session — or a vendor writer lock on the session that someone
holds (``handoff_lock_files``: Codex 0.171 keeps ``$CODEX_HOME/thread-writer-locks/<id>.lock``,
held by whoever writes the thread, also by the app-server daemon its TUI leaves behind). The
other pinned CLIs keep no such lock, so their process is the evidence.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from .._process._scan import agent_processes, lock_held, names_other_session
from ..errors import ConfigError
from ._handoff import HandoffHooks

#: A vendor session id as it may appear on a command line: never an option, never a shell word.
_SID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:-]{0,199}")


class TerminalHandoff(HandoffHooks):
    handoff_processes: ClassVar[tuple[str, ...]] = ()
    handoff_session_flags: ClassVar[tuple[str, ...]] = ()
    handoff_resume_args: ClassVar[tuple[str, ...]] = ()
    handoff_idle_args: ClassVar[tuple[str, ...]] = ()
    """Arguments of the vendor's own background helpers that outlive the terminal and write no
    conversation (Codex 0.171's TUI leaves a ``codex app-server … --managed-daemon`` behind)."""

    @classmethod
    def terminal_processes(cls, cwd: str, sid: str | None) -> list[int]:
        """Pids of the vendor CLI's processes driving ``cwd`` (and, with ``sid``, that session)."""
        found = agent_processes(cls.handoff_processes, cwd=cwd)
        return [
            p.pid
            for p in found
            if not any(arg in cls.handoff_idle_args for arg in p.argv)
            and (sid is None or not names_other_session(p.argv[1:], sid, cls.handoff_session_flags))
        ]

    @classmethod
    def handoff_lock_files(cls, sid: str, env: Mapping[str, str] | None) -> list[Path]:
        """The vendor's own writer-lock files of ``sid`` (none by default)."""
        return []

    @classmethod
    def is_cwd_externally_owned(
        cls, cwd: str, sid: str | None, *, env: Mapping[str, str] | None = None
    ) -> bool:
        if not cls.handoff_processes or not sys.platform.startswith("linux"):
            # Without /proc corral cannot see a terminal: refuse, never guess "nobody".
            return super().is_cwd_externally_owned(cwd, sid, env=env)
        if sid is not None and any(lock_held(p) for p in cls.handoff_lock_files(sid, env)):
            return True
        return bool(cls.terminal_processes(cwd, sid))

    @classmethod
    def terminal_resume_command(cls, sid: str, *, cwd: str, binary: str | None = None) -> list[str]:
        if not cls.handoff_resume_args:
            return super().terminal_resume_command(sid, cwd=cwd, binary=binary)
        if not _SID.fullmatch(sid):
            raise ConfigError(f"not a session id: {sid[:80]!r}")
        program = binary or getattr(cls, "cli_binary", None) or cls.handoff_processes[0]
        return [program, *(arg.replace("{sid}", sid) for arg in cls.handoff_resume_args)]


__all__ = ["TerminalHandoff"]
