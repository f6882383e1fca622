"""``corral chat`` under a real pseudo-terminal, with the scripted adapter.

Prompt, a second prompt typed while the turn runs (queued), Ctrl-C (stops the turn, not the
session), the queued prompt then delivered, ``/quit``.
"""

from __future__ import annotations

import os
import pty
import select
import sys
from pathlib import Path

WAIT = 20.0


class Terminal:
    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        pid, fd = pty.fork()
        if pid == 0:  # the child: corral chat, with the pty as its controlling terminal
            os.execve(sys.executable, argv, env)
        self.pid, self.fd = pid, fd
        self.buffer = ""
        self.seen = ""
        """Everything read and consumed so far."""

    def expect(self, text: str) -> str:
        """Read until ``text`` appears (after what was already consumed); fail after WAIT."""
        while text not in self.buffer:
            ready, _, _ = select.select([self.fd], [], [], WAIT)
            assert ready, f"timed out waiting for {text!r}; got:\n{self.buffer}"
            try:
                chunk = os.read(self.fd, 4096).decode(errors="replace")
            except OSError:  # EIO: the child closed the terminal
                chunk = ""
            assert chunk, f"terminal closed before {text!r}; got:\n{self.buffer}"
            self.buffer += chunk
        before, _, self.buffer = self.buffer.partition(text)
        self.seen += before + text
        return before + text

    def send(self, data: str) -> None:
        os.write(self.fd, data.encode())

    def wait(self) -> int:
        while True:  # drain so the child never blocks on a full terminal
            ready, _, _ = select.select([self.fd], [], [], WAIT)
            assert ready, "chat did not exit"
            try:
                if not os.read(self.fd, 4096):
                    break
            except OSError:
                break
        _, status = os.waitpid(self.pid, 0)
        return os.waitstatus_to_exitcode(status)


def test_chat_queue_and_ctrl_c(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "CORRAL_EXTRA_ADAPTERS": "corral.testing.scripted_adapter:ScriptedAdapter",
        "CORRAL_HOME": str(tmp_path),
        "TERM": "dumb",
    }
    argv = [
        sys.executable,
        "-c",
        "from corral.cli import main; main()",
        "chat",
        "scripted",
        "--db",
        str(tmp_path / "chat.db"),
    ]
    term = Terminal(argv, env)
    term.expect("Ctrl-C stops the turn")
    term.expect("> ")
    term.send("[hang] first\n")
    term.expect("› [hang] first")  # the prompt, once, when it is sent
    term.send("second\n")
    term.expect("queued (1 waiting): 'second'")
    term.send("\x03")  # Ctrl-C through the terminal's line discipline: SIGINT
    term.expect("stopping the turn")
    term.expect("— turn stopped")
    term.expect("› second")
    term.expect("echo: second")
    term.expect("— turn finished")
    term.send("/status\n")
    term.expect("status: idle · no turn running · queue: 2 delivered")
    term.send("third\n")
    term.expect("echo: third")
    term.expect("— turn finished")
    # The same rules as every terminal view: no raw markers, each prompt shown once.
    assert "[" not in term.seen.replace("[hang]", ""), term.seen
    assert term.seen.count("› second") == 1, term.seen
    term.send("/quit\n")
    term.expect("session")
    assert term.wait() == 0

    import sqlite3

    conn = sqlite3.connect(tmp_path / "chat.db")
    states = conn.execute("SELECT text, state FROM prompts ORDER BY position").fetchall()
    assert states == [
        ("[hang] first", "delivered"),
        ("second", "delivered"),
        ("third", "delivered"),
    ]
    [(state,)] = conn.execute("SELECT state FROM sessions").fetchall()
    assert state == "disconnected"  # kept, resumable with --session
