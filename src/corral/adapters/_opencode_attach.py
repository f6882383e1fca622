"""Attach records: how ``corral attach`` finds the OpenCode server behind a running session.

While an :class:`~corral.adapters.opencode.OpenCodeAdapter` runs, it keeps one JSON file per
session under ``<corral home>/attach/`` (mode 0600: it holds the server password) with the server
URL, the OpenCode session id, the working directory and the binary. ``corral attach`` looks a
session up by corral session id or OpenCode session id and builds the ``opencode attach`` command.
The file is removed when the adapter stops; a record whose server PID is gone is stale.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from .._paths import home_dir
from ..errors import SessionError


@dataclass(frozen=True)
class AttachRecord:
    session_id: str
    """corral's session id (the one ``start()`` was given)."""
    agent_session_id: str
    """OpenCode's ``ses_…`` id."""
    url: str
    password: str
    username: str
    cwd: str
    binary: str
    pid: int | None

    def command(self) -> list[str]:
        """argv of OpenCode's own TUI attached to this server and session."""
        return [
            self.binary,
            "attach",
            self.url,
            "--session",
            self.agent_session_id,
            "--dir",
            self.cwd,
        ]

    def env(self) -> dict[str, str]:
        """Credentials for the TUI (passed by environment, never on the command line)."""
        return {
            "OPENCODE_SERVER_PASSWORD": self.password,
            "OPENCODE_SERVER_USERNAME": self.username,
        }

    def alive(self) -> bool:
        if self.pid is None:
            return True
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


def attach_dir(root: Path | None = None) -> Path:
    return (root or home_dir()) / "attach"


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:120]


def write_record(record: AttachRecord, root: Path | None = None) -> Path:
    directory = attach_dir(root)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{_safe(record.session_id)}.json"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(asdict(record), fh)
    return path


def remove_record(path: Path | None) -> None:
    if path is not None:
        path.unlink(missing_ok=True)


def list_records(root: Path | None = None) -> list[AttachRecord]:
    records: list[AttachRecord] = []
    for path in sorted(attach_dir(root).glob("*.json")):
        try:
            records.append(AttachRecord(**json.loads(path.read_text("utf-8"))))
        except (OSError, ValueError, TypeError):
            continue
    return records


def find_record(session: str, root: Path | None = None) -> AttachRecord:
    """The live record whose corral or OpenCode session id is ``session``."""
    for record in list_records(root):
        if session in (record.session_id, record.agent_session_id) and record.alive():
            return record
    raise SessionError(f"no running OpenCode session {session!r} to attach to", session)
