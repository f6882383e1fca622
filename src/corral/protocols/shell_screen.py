"""The shell grade's parser: a terminal screen in, the agent's new text out (seed 000 shell grade).

Everything a shell-grade agent says is terminal output, so the parser is a terminal emulator
(pyte: cursor moves, colours, erases, scroll regions and wide characters are *interpreted*, not
stripped with regular expressions) plus a screen differ:

* :meth:`ScreenParser.feed` takes raw terminal bytes. It never raises: a byte sequence pyte cannot
  digest is dropped (and counted in ``errors``). Queries the program sends to its terminal (cursor
  position, device attributes) are answered the way a terminal would: :meth:`replies` returns the
  bytes to type back (a TUI that asks where its cursor is waits for the answer).
* :meth:`begin_turn` takes a snapshot of the *document* — the lines scrolled off the top
  (``HistoryScreen``) followed by the visible screen — and the prompt.
* :meth:`turn_text` diffs the document now against that snapshot (``difflib`` on lines) and keeps
  the lines that were inserted or rewritten, minus the chrome: blank lines, lines made only of
  box-drawing characters, lines a manifest rule drops (``dropPatterns``: spinners, status bars,
  the input box) and the echoed prompt (a line whose text, after ``stripPatterns`` and leading
  marks, is part of the prompt). ``stripPatterns`` remove a TUI's markers (``● ``) from kept lines.
* :meth:`deltas` turns growth of that text into :class:`TextDelta` events: only text not yet
  emitted, and only while the text keeps its earlier prefix (a TUI that rewrites what it drew —
  markdown re-rendered, a spinner line — yields no delta for the rewrite; the final text still
  comes whole in the ``TextComplete`` of :meth:`end_turn`).
* :meth:`ready` tells the driver whether the screen looks idle: the manifest's ``readyPattern``
  visible and its ``busyPattern`` not (both searched in the visible screen, multi-line).

Timing (how long the screen has been quiet) is the driver's business, not the parser's.
"""

from __future__ import annotations

import contextlib
import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyte

from ..events import Event, StopReason, TextComplete, TextDelta, TurnCompleted

_BOX_ONLY = re.compile(r"^[\s\u2500-\u259f\u2800-\u28ff·•…\-=_|+]*$")
"""Box drawing, block elements, braille (spinners, logos) and rule characters only: never text."""
_UNPARSED = re.compile(rb"\x1b\[[<=][0-9;:]*[\x40-\x7e]|\x1bP.*?(?:\x1b\\|\x07)", re.S)
"""What pyte 0.8.2 would print as text: CSI with a ``<`` or ``=`` marker (the kitty keyboard
protocol's push/pop/query) and DCS strings (terminal capability queries)."""
_PARTIAL = re.compile(rb"\x1b(?:\[[<=]?[0-9;:]*|P(?:(?!\x1b\\)[^\x07])*)?\Z", re.S)
_MAX_CARRY = 4096
_LEADING_MARKS = re.compile(r"^[\s>❯›»•●⏺✻*\-$#]+")
HISTORY_LINES = 2000


def _compile(patterns: Sequence[str]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p) for p in patterns)


@dataclass(frozen=True)
class ScreenRules:
    """What a manifest says about its TUI's screen (``presentation.shell``)."""

    ready_pattern: str | None = None
    """A regex that is visible on the screen when the program waits for input."""
    busy_pattern: str | None = None
    """A regex that is visible on the screen while the program works (``esc to interrupt``)."""
    drop_patterns: tuple[str, ...] = ()
    """Lines matching any of these are TUI chrome, not the agent's text."""
    strip_patterns: tuple[str, ...] = ()
    """Removed from every kept line (message markers such as ``● ``)."""
    _compiled: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._compiled["ready"] = (
            re.compile(self.ready_pattern, re.M) if self.ready_pattern else None
        )
        self._compiled["busy"] = re.compile(self.busy_pattern, re.M) if self.busy_pattern else None
        self._compiled["drop"] = _compile(self.drop_patterns)
        self._compiled["strip"] = _compile(self.strip_patterns)

    @property
    def ready_re(self) -> re.Pattern[str] | None:
        value: re.Pattern[str] | None = self._compiled["ready"]
        return value

    @property
    def busy_re(self) -> re.Pattern[str] | None:
        value: re.Pattern[str] | None = self._compiled["busy"]
        return value

    @property
    def drop_res(self) -> tuple[re.Pattern[str], ...]:
        value: tuple[re.Pattern[str], ...] = self._compiled["drop"]
        return value

    @property
    def strip_res(self) -> tuple[re.Pattern[str], ...]:
        value: tuple[re.Pattern[str], ...] = self._compiled["strip"]
        return value


class _Terminal(pyte.HistoryScreen):
    """A screen that collects the answers a terminal sends back (CPR, device attributes)."""

    def __init__(self, columns: int, lines: int) -> None:
        super().__init__(columns, lines, history=HISTORY_LINES)
        self.outbox: list[str] = []

    def write_process_input(self, data: str) -> None:
        self.outbox.append(data)


def _render(row: Any, columns: int) -> str:
    return "".join(row[x].data for x in range(columns)).rstrip()


class ScreenParser:
    """One terminal's screen and the current turn's text; see the module docstring."""

    def __init__(self, rules: ScreenRules, *, columns: int = 120, rows: int = 40) -> None:
        self.rules = rules
        self.columns = columns
        self.rows = rows
        self.screen = _Terminal(columns, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.errors = 0
        self._carry = b""
        self._baseline: list[str] = []
        self._prompt = ""
        self._emitted = ""
        self._in_turn = False

    # ── the terminal ──
    def feed(self, data: bytes) -> None:
        """Interpret terminal output; never raises. An escape sequence split across chunks is
        held until its end arrives (at most 4 KiB)."""
        data = self._carry + data
        self._carry = b""
        partial = _PARTIAL.search(data, max(0, len(data) - _MAX_CARRY))
        if partial is not None:
            data, self._carry = data[: partial.start()], data[partial.start() :]
        data = _UNPARSED.sub(b"", data)
        try:
            self.stream.feed(data)
        except Exception:  # pyte on hostile input: drop the chunk, keep the screen
            self.errors += 1
            with contextlib.suppress(Exception):
                self.stream = pyte.ByteStream(self.screen)

    def replies(self) -> bytes:
        """What the terminal answers to the program's queries since the last call."""
        out = "".join(self.screen.outbox)
        self.screen.outbox.clear()
        return out.encode("utf-8", "replace")

    def display(self) -> list[str]:
        """The visible screen, one string per row (trailing blanks removed)."""
        try:
            return [line.rstrip() for line in self.screen.display]
        except Exception:
            self.errors += 1
            return []

    def document(self) -> list[str]:
        """Lines scrolled off the top, then the visible screen."""
        try:
            history = [_render(row, self.columns) for row in self.screen.history.top]
        except Exception:
            self.errors += 1
            history = []
        return history + self.display()

    def ready(self) -> bool:
        """The screen looks idle: ``readyPattern`` visible (when set), ``busyPattern`` not."""
        text = "\n".join(self.display())
        ready, busy = self.rules.ready_re, self.rules.busy_re
        if ready is not None and ready.search(text) is None:
            return False
        return busy is None or busy.search(text) is None

    def busy(self) -> bool:
        """``busyPattern`` is visible."""
        busy = self.rules.busy_re
        return busy is not None and busy.search("\n".join(self.display())) is not None

    # ── turns ──
    @property
    def in_turn(self) -> bool:
        return self._in_turn

    def begin_turn(self, prompt: str) -> None:
        self._baseline = self.document()
        self._prompt = prompt
        self._emitted = ""
        self._in_turn = True

    def _is_echo(self, text: str) -> bool:
        """The line shows (part of) the prompt as typed: all of it, its end (a wrapped prompt's
        last row), or a long enough piece of it (its other rows)."""
        bare = " ".join(_LEADING_MARKS.sub("", text).split())
        prompt = " ".join(self._prompt.split())
        if not bare or not prompt:
            return False
        return bare == prompt or prompt.endswith(bare) or (len(bare) >= 8 and bare in prompt)

    def _keep(self, line: str) -> str | None:
        if not line.strip() or _BOX_ONLY.match(line):
            return None
        if any(p.search(line) for p in self.rules.drop_res):
            return None
        if self._is_echo(line):
            return None
        for pattern in self.rules.strip_res:
            line = pattern.sub("", line)
        line = line.rstrip()
        return line if line.strip() else None

    def turn_text(self) -> str:
        """The agent's text in the current turn so far (see the module docstring)."""
        if not self._in_turn:
            return ""
        now = self.document()
        matcher = difflib.SequenceMatcher(None, self._baseline, now, autojunk=False)
        kept: list[str] = []
        for tag, _, _, j1, j2 in matcher.get_opcodes():
            if tag not in ("insert", "replace"):
                continue
            for line in now[j1:j2]:
                keep = self._keep(line)
                if keep is not None:
                    kept.append(keep)
        return _dedent("\n".join(kept))

    def deltas(self) -> list[Event]:
        """Text deltas for what the turn's text grew by since the last call."""
        if not self._in_turn:
            return []
        text = self.turn_text()
        if len(text) > len(self._emitted) and text.startswith(self._emitted):
            delta = text[len(self._emitted) :]
            self._emitted = text
            return [TextDelta(text=delta)]
        return []

    def end_turn(self, stop_reason: StopReason, error: str | None = None) -> list[Event]:
        """The turn's last deltas, its whole text and ``TurnCompleted``."""
        if not self._in_turn:
            return []
        events = self.deltas()
        text = self.turn_text()
        if text:
            events.append(TextComplete(text=text))
        events.append(TurnCompleted(stop_reason=stop_reason, error=error, result_text=text or None))
        self._in_turn = False
        return events


def _dedent(text: str) -> str:
    """Remove the indentation every line shares (a TUI's left gutter)."""
    lines = text.split("\n")
    widths = [len(line) - len(line.lstrip(" ")) for line in lines if line.strip()]
    cut = min(widths, default=0)
    return "\n".join(line[cut:] for line in lines)
