"""How the terminal views show events: to a person (colour or plain text) or a program (JSONL).

Every human view follows one set of rules, :class:`._render_rules.Rules` (the web app's too):
``corral run`` prints them with colour (``HumanRenderer``: the answer on stdout, tools, diffs and
status on stderr); ``corral sessions show|tail`` and ``corral chat`` print them as plain text
(``PlainRenderer``).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

from ..events import Envelope, Event, encode
from ._render_rules import Kind, Piece, Rules

if TYPE_CHECKING:  # the sessions package (SQLite, the registry) is not needed to render a run
    from rich.console import Console  # rich loads for a human view only (``corral run --json``)

    from ..sessions import SessionStatus

STYLES: dict[Kind, str | None] = {
    "text": None,
    "user": "bold",
    "tool": "cyan",
    "ok": "green",
    "fail": "red",
    "diff": None,
    "ask": "yellow",
    "answer": "dim",
    "info": "dim",
    "warn": "yellow",
    "error": "bold red",
}


class JsonRenderer:
    """One JSON envelope per line on stdout."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout

    def show(self, envelope: Envelope) -> None:
        self.out.write(encode(envelope).decode() + "\n")
        self.out.flush()


class HumanRenderer:
    """Streamed text on stdout; tool calls, diffs and status on stderr, so stdout stays the answer."""

    def __init__(self, out: Console | None = None, err: Console | None = None) -> None:
        from rich.console import Console

        self.out = out or Console(highlight=False)
        self.err = err or Console(stderr=True, highlight=False)
        self.rules = Rules()

    def show(self, envelope: Envelope) -> None:
        self.render(envelope.event)

    def render(self, event: Event) -> None:
        for piece in self.rules.pieces(event):
            self._print(piece)

    def _print(self, piece: Piece) -> None:
        from rich.syntax import Syntax
        from rich.text import Text

        console = self.out if piece.stream == "out" else self.err
        if piece.kind == "diff":
            code = piece.text.rstrip("\n")
            console.print(Syntax(code, "diff", theme="ansi_dark", background_color="default"))
            return
        style = STYLES[piece.kind]
        console.print(Text(piece.text, style=style or ""), end="", soft_wrap=True)


class PlainRenderer:
    """The same rules as plain text, for views that interleave everything on one stream."""

    def __init__(self) -> None:
        self.rules = Rules()

    def render(self, envelope: Envelope) -> str | None:
        """The text for one envelope, or ``None`` when it has nothing to show."""
        text = "".join(p.text for p in self.rules.pieces(envelope.event))
        return text or None


def status_line(st: SessionStatus) -> str:
    """``/status`` for a person: state, turn, queue and pending cards on one line."""
    parts = [f"status: {st.session.state}", "running a turn" if st.busy else "no turn running"]
    queue = ", ".join(f"{n} {state}" for state, n in sorted(st.queue.items()) if n)
    parts.append(f"queue: {queue or 'empty'}")
    if st.pending_approvals or st.pending_questions:
        parts.append(
            f"{len(st.pending_approvals)} approval(s), {len(st.pending_questions)} question(s)"
            " waiting"
        )
    return " · ".join(parts)
