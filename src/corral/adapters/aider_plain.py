"""aider as a plain agent: ``aider … --message=PROMPT``, one process per prompt (``aider-plain``).

aider (aider-chat, pinned 0.86.2) has no machine protocol; with ``--message`` it answers one prompt
on stdout and exits. The launch words are its manifest's (``registry/builtin/aider-plain.json``):
``--yes-always`` (no question can be answered: stdin is closed), ``--no-pretty`` (no colours or
live rendering), ``--no-auto-commits``, and two switches that keep a prompt from reaching out on
its own: ``--no-detect-urls`` (aider would fetch a URL named in the prompt) and
``--no-suggest-shell-commands`` (with ``--yes-always`` it would run what it suggests). The prompt
is one ``--message=`` word, so a prompt starting with ``-`` is not taken for an option. A prompt
starting with ``/`` is an aider command (``/add``, ``/run``…), as it is in aider's own chat.

**The session is a chat history file.** aider writes every exchange to ``--chat-history-file`` and,
with ``--restore-chat-history``, sends that history with the next prompt. Each corral session gets
its own file, ``home_dir()/plain/aider/<id>.chat.history.md`` (private, never the project's own
``.aider.chat.history.md``), named by an opaque id reported through ``on_session_id``; a follow-up
prompt's process restores it, and ``resume_session_id`` names an earlier session's file;
``terminal_resume_command(id)`` is the aider command that carries on in a terminal.

The model comes from aider's own settings (``AIDER_MODEL``, which the redirection sets, or an
``extra_args`` ``--model``); the ``model`` launch option is not offered, because aider's names are
litellm's (``openai/NAME``), not the endpoint's.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import ClassVar, Unpack

from .._paths import ensure_private_dir, home_dir
from .._process import Tap
from ..errors import ConfigError
from ..events import AgentInfo
from ._options import LaunchArgs
from .plain import PLAIN_OPTIONS, PlainAdapter, PlainProtocol

SESSION_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,80}$")


def history_dir() -> Path:
    """Where aider-plain sessions keep their chat history files."""
    return home_dir() / "plain" / "aider"


class AiderPlainAdapter(PlainAdapter):
    """aider, one ``--message`` process per prompt, its session a chat history file."""

    agent_id: ClassVar[str] = "aider-plain"
    display_name: ClassVar[str] = "Aider (plain, one process per prompt)"
    cli_binary: ClassVar[str | None] = "aider"
    plain_protocol: ClassVar[PlainProtocol] = "plain-argv"
    plain_args: ClassVar[tuple[str, ...]] = (
        "--yes-always",
        "--no-pretty",
        "--no-auto-commits",
        "--no-detect-urls",
        "--no-suggest-shell-commands",
        "--message={prompt}",
    )
    """The manifest's launch words (a unit test keeps the two equal)."""

    supported_options = PLAIN_OPTIONS | {"resume_session_id"}
    # Shown on aider-chat 0.86.2 against the scripted model (tests/realcli/test_plain_aider.py):
    # a new process restores an earlier session's history; SIGINT mid-answer ends the turn.
    cap_resume = True
    cap_cancel = True
    models_unavailable = "aider's model comes from its settings (AIDER_MODEL or --model)"

    def __init__(
        self,
        *,
        tap: Tap | None = None,
        history_root: str | None = None,
        **launch: Unpack[LaunchArgs],
    ) -> None:
        super().__init__(tap=tap, **launch)
        sid = self.resume_session_id
        if sid is not None and not SESSION_ID_RE.match(sid):
            raise ConfigError(f"{sid!r} is not an aider-plain session id")
        self.history_root = Path(history_root) if history_root else history_dir()
        self.session_id = sid or uuid.uuid4().hex

    @property
    def history_file(self) -> Path:
        return self.history_root / f"{self.session_id}.chat.history.md"

    def session_args(self) -> list[str]:
        return [
            "--chat-history-file",
            str(self.history_file),
            "--restore-chat-history",
            "--input-history-file",
            str(self.history_root / f"{self.session_id}.input.history"),
        ]

    async def start(self, session_id: str) -> AgentInfo:
        if self.resume_session_id is not None and not self.history_file.is_file():
            raise ConfigError(
                f"aider-plain has no chat history for session {self.resume_session_id!r} to resume"
            )
        ensure_private_dir(self.history_root)
        info = await super().start(session_id)
        if self.on_session_id is not None:
            self.on_session_id(self.session_id)
        return info

    def agent_session_id(self) -> str | None:
        return self.session_id

    @classmethod
    def terminal_resume_command(cls, sid: str, *, cwd: str, binary: str | None = None) -> list[str]:
        """aider in a terminal, on the session's chat history (no corral in between)."""
        if not SESSION_ID_RE.match(sid):
            raise ConfigError(f"{sid!r} is not an aider-plain session id")
        history = history_dir() / f"{sid}.chat.history.md"
        return [binary or "aider", "--chat-history-file", str(history), "--restore-chat-history"]
