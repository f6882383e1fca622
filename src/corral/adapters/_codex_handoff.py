"""How a Codex terminal session is recognised and resumed (seed 003), for both Codex adapters."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ._handoff_terminal import TerminalHandoff


class CodexTerminal(TerminalHandoff):
    handoff_processes = ("codex",)
    handoff_session_flags = ("resume",)
    handoff_resume_args = ("resume", "{sid}")
    # The TUI's managed app-server daemon stays after the TUI exits: it counts only through the
    # thread's writer lock, which it keeps while it holds the thread.
    handoff_idle_args = ("--managed-daemon", "pid-update-loop")

    @classmethod
    def handoff_lock_files(cls, sid: str, env: Mapping[str, str] | None) -> list[Path]:
        from ._store_codex import codex_home

        return [codex_home(env) / "thread-writer-locks" / f"{sid}.lock"]
