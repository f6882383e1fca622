"""Plain output (``plain-argv``, ``plain-stdin``) → corral events.

A plain agent speaks no protocol: one process runs one turn, and whatever it prints on stdout is
its answer. :class:`PlainParser` is synchronous and does no I/O: ``feed(chunk)`` for each stdout
chunk as it arrives (any split: mid-line, mid-character, mid-escape), ``finish(...)`` once the
process has exited::

    stdout bytes                → TextDelta (decoded incrementally, terminal escapes removed)
    exit 0                      → TextComplete (the whole answer), TurnCompleted(end_turn)
    exit N ≠ 0                  → Error(code="exit_status"), TurnCompleted(error, "exited with N")
    cancelled (corral stopped)  → TurnCompleted(cancelled)

What the terminal would have interpreted is removed, never shown as text: CSI sequences
(colours, cursor moves, ``ESC [ … final``, also the 8-bit ``U+009B`` introducer), OSC/DCS/APC/PM/SOS
strings (window titles, hyperlinks, up to BEL or ``ESC \\``), two-byte escapes (``ESC 7``,
``ESC ( B``) and C0/C1 control characters other than newline and tab (``\\r`` included, so
``\\r\\n`` becomes ``\\n``). A sequence split across chunks is held until it completes; one that
never ends is given up after :data:`MAX_ESCAPE` characters. Invalid UTF-8 becomes U+FFFD; a
character split across chunks is joined. stderr is not answer text: the driver hands its
(bounded, redacted) tail to :meth:`finish`, which keeps it in the turn end's ``raw`` and, for a
failed turn, in the error message.

Every entry point is total (:func:`~corral.protocols._total.total`): nothing the agent prints
raises past the parser.
"""

from __future__ import annotations

import codecs
import re

from ..events import ErrorEvent, Event, StopReason, TextComplete, TextDelta, TurnCompleted
from ._total import total

__all__ = ["MAX_ESCAPE", "MAX_TEXT", "PlainParser", "strip_terminal"]

MAX_ESCAPE = 4096
"""Characters an unfinished escape sequence may span before it is given up (shown no further)."""
MAX_TEXT = 4 * 1024 * 1024
"""Characters of a turn kept for its ``TextComplete`` (the deltas carry everything)."""
_STDERR_IN_ERROR = 2000

_ESC = "\x1b"
_CSI_8BIT = "\x9b"
_STRING_STARTS = frozenset("]PX^_")  # OSC, DCS, SOS, PM, APC
_STRING_8BIT = frozenset("\x9d\x90\x98\x9e\x9f")
# Fast path: text with nothing a terminal would interpret.
_PLAIN_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class _Stripper:
    """Removes terminal escape sequences and control characters from a stream of text."""

    __slots__ = ("_held", "_state")

    def __init__(self) -> None:
        self._state = "text"
        """``text``, ``esc`` (after ESC), ``escint`` (ESC + intermediates), ``csi``, ``str``
        (inside an OSC/DCS… string), ``strend`` (ESC seen inside a string)."""
        self._held = 0
        """Characters consumed by the current unfinished sequence."""

    def feed(self, text: str) -> str:
        if self._state == "text" and not _PLAIN_RE.search(text):
            return text
        out: list[str] = []
        i, n = 0, len(text)
        while i < n:
            if self._state == "text":
                # Copy the run of ordinary characters up to the next one a terminal interprets.
                m = _PLAIN_RE.search(text, i)
                if m is None:
                    out.append(text[i:])
                    break
                out.append(text[i : m.start()])
                i = m.start()
            self._step(text[i], out)
            i += 1
        return "".join(out)

    def _step(self, ch: str, out: list[str]) -> None:
        state = self._state
        if state == "text":
            if ch == _ESC:
                self._enter("esc")
            elif ch == _CSI_8BIT:
                self._enter("csi")
            elif ch in _STRING_8BIT:
                self._enter("str")
            elif ch in "\n\t" or not ("\x00" <= ch <= "\x1f" or "\x7f" <= ch <= "\x9f"):
                out.append(ch)
            return
        self._held += 1
        if self._held > MAX_ESCAPE:
            # A sequence that never ends: stop hiding what follows.
            self._state = "text"
            self._step(ch, out)
            return
        if state == "esc":
            if ch == "[":
                self._state = "csi"
            elif ch in _STRING_STARTS:
                self._state = "str"
            elif "\x20" <= ch <= "\x2f":
                self._state = "escint"
            elif ch == _ESC:
                self._held = 0
            elif ch < "\x20":
                # A control character cancels the escape and is itself handled as text.
                self._state = "text"
                self._step(ch, out)
            else:
                self._state = "text"  # ESC + final: ESC 7, ESC =, ESC c…
        elif state == "escint":
            if "\x20" <= ch <= "\x2f":
                return
            self._state = "text"
            if ch < "\x20" or ch > "\x7e":
                self._step(ch, out)
        elif state == "csi":
            if "\x40" <= ch <= "\x7e":
                self._state = "text"
            elif ch == _ESC:
                self._enter("esc")
            elif not "\x20" <= ch <= "\x3f":
                # Not part of a CSI: the sequence is malformed; drop it, keep the character.
                self._state = "text"
                self._step(ch, out)
        elif state == "str":
            if ch == "\x07" or ch == "\x9c":
                self._state = "text"
            elif ch == _ESC:
                self._state = "strend"
        elif state == "strend":
            # ESC \ is the string terminator; any other ESC x ends the string and starts x.
            self._state = "text" if ch == "\\" else "str"

    def _enter(self, state: str) -> None:
        self._state = state
        self._held = 0


def strip_terminal(text: str) -> str:
    """``text`` with terminal escape sequences and control characters removed (one piece)."""
    return _Stripper().feed(text)


class PlainParser:
    """One turn of a plain agent; see the module docstring."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._stripper = _Stripper()
        self._parts: list[str] = []
        self._kept = 0
        self.turn_done = False
        self.bytes_seen = 0

    @total
    def feed(self, chunk: bytes) -> list[Event]:
        """A piece of stdout, as it arrived."""
        if not isinstance(chunk, bytes | bytearray | memoryview):
            return []
        data = bytes(chunk)
        self.bytes_seen += len(data)
        return self._text(self._decoder.decode(data))

    @total
    def finish(
        self, exit_code: int | None, stderr_tail: str = "", *, cancelled: bool = False
    ) -> list[Event]:
        """The process has exited (``exit_code`` ``None``: unknown); ends the turn."""
        if self.turn_done:
            return []
        self.turn_done = True
        events = self._text(self._decoder.decode(b"", final=True))
        if self._parts:
            events.append(TextComplete(text="".join(self._parts)))
        stderr = stderr_tail if isinstance(stderr_tail, str) else ""
        raw = {"exit_code": exit_code, "stderr_tail": stderr}
        if cancelled:
            events.append(TurnCompleted(stop_reason=StopReason.CANCELLED, raw=raw))
        elif exit_code == 0:
            events.append(TurnCompleted(stop_reason=StopReason.END_TURN, raw=raw))
        else:
            what = "exited" if exit_code is None else f"exited with code {exit_code}"
            if exit_code is not None and exit_code < 0:
                what = f"was killed by signal {-exit_code}"
            message = f"the agent {what}"
            tail = strip_terminal(stderr).strip()[-_STDERR_IN_ERROR:]
            detail = f"{message}: {tail}" if tail else message
            events.append(ErrorEvent(message=detail, code="exit_status", raw=raw))
            events.append(TurnCompleted(stop_reason=StopReason.ERROR, error=message, raw=raw))
        return events

    def _text(self, decoded: str) -> list[Event]:
        text = self._stripper.feed(decoded)
        if not text:
            return []
        if self._kept < MAX_TEXT:
            piece = text[: MAX_TEXT - self._kept]
            self._parts.append(piece)
            self._kept += len(piece)
        return [TextDelta(text=text)]
