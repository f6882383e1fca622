"""The shell grade's screen differ: ANSI interpreted, only the agent's new text kept, never a raise."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral.adapters.shell import ClaudeTuiAdapter, CodexTuiAdapter, ShellAdapter
from corral.events import StopReason, TextComplete, TextDelta, TurnCompleted
from corral.protocols.shell_screen import ScreenParser, ScreenRules

RULES = ScreenRules(
    ready_pattern=r"^> ?$",
    busy_pattern=r"esc to interrupt",
    drop_patterns=(r"^Tokens: ", r"^>\s*$"),
    strip_patterns=(r"^● ",),
)


def _booted() -> ScreenParser:
    p = ScreenParser(RULES, columns=60, rows=12)
    p.feed(b"\x1b[1mBANNER\x1b[0m v1\r\n\x1b[2m----\x1b[0m\r\n> ")
    return p


def test_ansi_is_interpreted_not_stripped() -> None:
    p = ScreenParser(ScreenRules(), columns=20, rows=4)
    # Colours vanish, a carriage return overwrites, erase-line clears, cursor moves place text.
    p.feed(b"\x1b[31mred\x1b[0m abc\rX\x1b[2;5Hmoved\x1b[1;10H\x1b[Kz")
    assert p.display()[0] == "Xed abc  z"
    assert p.display()[1] == "    moved"


def test_a_turn_keeps_only_the_new_text() -> None:
    p = _booted()
    p.begin_turn("Say hi to the world")
    p.feed(b"Say hi to the world\r\n")  # the echo
    p.feed(b"\r\x1b[2K| working (esc to interrupt)")  # a spinner drawn in place...
    assert p.busy() and not p.ready()
    p.feed(b"\r\x1b[2K")  # ...and erased
    p.feed(b"\x1b[32m\xe2\x97\x8f Hi, world!\x1b[0m\r\nsecond line\r\nTokens: 3 sent\r\n> ")
    assert p.ready()
    assert p.turn_text() == "Hi, world!\nsecond line"
    events = p.end_turn(StopReason.END_TURN)
    assert events[-2:] == [
        TextComplete(text="Hi, world!\nsecond line"),
        TurnCompleted(stop_reason=StopReason.END_TURN, result_text="Hi, world!\nsecond line"),
    ]
    assert not p.in_turn and p.deltas() == []


def test_deltas_carry_only_text_not_yet_sent() -> None:
    p = _booted()
    p.begin_turn("q")
    p.feed(b"q\r\nHello ")
    assert p.deltas() == [TextDelta(text="Hello")]
    assert p.deltas() == []  # nothing new
    p.feed(b"from the model.")
    assert p.deltas() == [TextDelta(text=" from the model.")]
    p.feed(b"\r\nmore")
    assert p.deltas() == [TextDelta(text="\nmore")]


def test_a_rewrite_sends_no_delta_but_the_final_text_is_whole() -> None:
    p = _booted()
    p.begin_turn("q")
    p.feed(b"q\r\ndraft answer")
    assert p.deltas() == [TextDelta(text="draft answer")]
    p.feed(b"\r\x1b[2Kfinal answer")  # the TUI redrew the line (markdown re-rendered)
    assert p.deltas() == []
    complete = [e for e in p.end_turn(StopReason.END_TURN) if isinstance(e, TextComplete)]
    assert complete == [TextComplete(text="final answer")]


def test_the_second_turn_does_not_repeat_the_first() -> None:
    p = _booted()
    p.begin_turn("one")
    p.feed(b"one\r\nsame answer\r\n> ")
    assert p.turn_text() == "same answer"
    p.end_turn(StopReason.END_TURN)
    p.begin_turn("two")
    p.feed(b"two\r\nsame answer\r\n> ")
    assert p.turn_text() == "same answer"  # the new line only, once


def test_text_scrolled_off_the_top_is_still_the_turns() -> None:
    p = ScreenParser(ScreenRules(), columns=30, rows=4)
    p.feed(b"banner\r\n> ")
    p.begin_turn("go")
    p.feed(b"go\r\n" + b"".join(f"line {i}\r\n".encode() for i in range(10)))
    assert p.turn_text() == "\n".join(f"line {i}" for i in range(10))


def test_sequences_pyte_would_print_are_removed_even_when_split() -> None:
    # The kitty keyboard protocol (CSI < u, CSI = 5 u) and DCS strings: pyte 0.8.2 prints them.
    for chunks in (
        [b"a\x1b[<ub"],
        [b"a\x1b[<", b"ub"],
        [b"a\x1b", b"[=5ub"],
        [b"a\x1bP>|x", b"yz\x1b\\b"],
        [b"a\x1b[3", b"1mb\x1b[0m"],
    ):
        p = ScreenParser(ScreenRules(), columns=20, rows=2)
        for chunk in chunks:
            p.feed(chunk)
        assert p.display()[0] == "ab", chunks


def test_terminal_queries_get_a_terminals_answers() -> None:
    p = ScreenParser(ScreenRules(), columns=20, rows=5)
    p.feed(b"ab\x1b[6n")
    assert p.replies() == b"\x1b[1;3R"
    assert p.replies() == b""


def test_a_short_answer_that_the_prompt_contains_is_kept() -> None:
    p = _booted()
    p.begin_turn("Answer yes or no, then stop")
    p.feed(b"Answer yes or no, then stop\r\nyes\r\n> ")
    assert p.turn_text() == "yes"


def test_a_wrapped_prompt_echo_is_dropped() -> None:
    p = ScreenParser(ScreenRules(), columns=20, rows=10)
    prompt = "please write a haiku about terminals"
    p.begin_turn(prompt)
    p.feed(b"> " + prompt.encode() + b"\r\n")  # wraps over two rows at 20 columns
    p.feed(b"ok haiku\r\n")
    assert p.turn_text() == "ok haiku"


@settings(max_examples=150, deadline=None)
@given(st.lists(st.binary(max_size=300), max_size=8), st.text(max_size=40))
def test_hostile_output_never_raises(chunks: list[bytes], prompt: str) -> None:
    p = ScreenParser(RULES, columns=40, rows=8)
    p.begin_turn(prompt)
    for chunk in chunks:
        p.feed(chunk)
        p.replies()
        for event in p.deltas():
            msgspec.json.encode(event)
        p.ready()
    for event in p.end_turn(StopReason.CANCELLED):
        msgspec.json.encode(event)


@pytest.mark.parametrize(
    ("adapter", "dialog", "idle"),
    [
        (ClaudeTuiAdapter, "❯ 1. Yes, I trust this folder\r\n  2. No, exit", "❯ \r\n"),
        (CodexTuiAdapter, "› 1. Trust and continue\r\n  2. Back", "› Ask Codex to do anything"),
    ],
)
def test_a_first_run_dialog_is_not_a_ready_screen(
    adapter: type[ShellAdapter], dialog: str, idle: str
) -> None:
    """A numbered choice under the TUI's prompt mark is a dialog: corral never types into it."""
    rules = adapter.load_profile().rules
    p = ScreenParser(rules, columns=60, rows=6)
    p.feed(dialog.encode())
    assert not p.ready()
    p.feed(b"\x1b[2J\x1b[H" + idle.encode())
    assert p.ready()
