"""The plain parser: stdout bytes → text deltas; exit → the turn's end. Untrusted input is total:
any bytes, split anywhere, never raise and always make storable events (property tests)."""

from __future__ import annotations

import io
from datetime import UTC, datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from corral.cli._run_render import HumanRenderer, JsonRenderer
from corral.events import (
    Envelope,
    ErrorEvent,
    Event,
    StopReason,
    TextComplete,
    TextDelta,
    TurnCompleted,
)
from corral.protocols.plain import MAX_ESCAPE, PlainParser, strip_terminal
from corral.testing.fuzz import unstorable

PROPS = settings(
    max_examples=300,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def run(chunks: list[bytes], code: int | None = 0, stderr: str = "", **kw: bool) -> list[Event]:
    parser = PlainParser()
    events: list[Event] = []
    for chunk in chunks:
        events += parser.feed(chunk)
    return events + parser.finish(code, stderr, **kw)


def text_of(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def test_stdout_streams_as_deltas_and_exit_0_completes_the_turn() -> None:
    events = run([b"Hello ", b"from the ", b"agent.\n"])
    assert [type(e) for e in events] == [TextDelta] * 3 + [TextComplete, TurnCompleted]
    assert text_of(events) == "Hello from the agent.\n"
    assert isinstance(events[3], TextComplete) and events[3].text == "Hello from the agent.\n"
    end = events[-1]
    assert isinstance(end, TurnCompleted) and end.stop_reason is StopReason.END_TURN
    assert end.raw == {"exit_code": 0, "stderr_tail": ""}


def test_a_character_split_across_chunks_is_joined() -> None:
    smile = "😀".encode()
    events = run([b"a" + smile[:1], smile[1:3], smile[3:] + b"b"])
    assert text_of(events) == "a😀b"


def test_invalid_utf8_is_replaced_and_a_truncated_character_at_exit_too() -> None:
    assert text_of(run([b"x\xffy", b"\xf0\x9f"])) == "x\ufffdy\ufffd"


def test_terminal_escapes_are_removed_even_when_split() -> None:
    out = (
        b"\x1b[1;3"
        + b"1mred\x1b[0m \x1b]0;a title\x07ok\r\n\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"
    )
    pieces = [out[i : i + 3] for i in range(0, len(out), 3)]
    assert text_of(run(pieces)) == "red ok\nlink"
    assert strip_terminal("\x9b2Jclear\x1b7\x1b(Bsaved\x08\x07\x00!") == "clearsaved!"
    assert strip_terminal("tab\tand\nline") == "tab\tand\nline"


def test_an_escape_that_never_ends_stops_hiding_text() -> None:
    shown = strip_terminal("\x1b]" + "x" * (MAX_ESCAPE + 10) + "visible")
    assert shown.endswith("visible")
    assert len(shown) < 40


def test_non_zero_exit_fails_the_turn_with_the_code_and_stderr() -> None:
    events = run([b"partial"], 3, "\x1b[31mboom\x1b[0m: no such file\n")
    error = next(e for e in events if isinstance(e, ErrorEvent))
    assert error.code == "exit_status"
    assert error.message == "the agent exited with code 3: boom: no such file"
    end = events[-1]
    assert isinstance(end, TurnCompleted)
    assert (end.stop_reason, end.error) == (StopReason.ERROR, "the agent exited with code 3")
    killed = run([], -9)[-1]
    assert isinstance(killed, TurnCompleted) and killed.error == "the agent was killed by signal 9"


def test_cancelled_turn_ends_cancelled_whatever_the_exit_code() -> None:
    end = run([b"Once upon"], -2, cancelled=True)[-1]
    assert isinstance(end, TurnCompleted) and end.stop_reason is StopReason.CANCELLED


def test_finish_twice_ends_once_and_non_bytes_are_ignored() -> None:
    parser = PlainParser()
    assert parser.feed("text, not bytes") == []  # type: ignore[arg-type]
    assert len(parser.finish(0)) == 1
    assert parser.finish(0) == []


@PROPS
@given(data=st.binary(max_size=2000), cuts=st.lists(st.integers(0, 2000), max_size=30))
def test_any_bytes_any_split_give_the_same_text_and_storable_events(
    data: bytes, cuts: list[int]
) -> None:
    points = sorted({c for c in cuts if c < len(data)})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    whole = run([data], 1, data.decode("utf-8", "replace"))
    split = run(chunks, 1, data.decode("utf-8", "replace"))
    assert text_of(split) == text_of(whole)
    assert text_of(whole) == strip_terminal(data.decode("utf-8", "replace"))
    for event in split:
        assert unstorable(event) is None, event
    assert isinstance(split[-1], TurnCompleted)


_TERMINAL = st.sampled_from(
    [
        "\x1b[",
        "\x1b]",
        "\x1b",
        "\x07",
        "\x1b\\",
        "\x9b",
        "\x9d",
        "m",
        ";",
        "0",
        "\r",
        "\n",
        "é",
        "[/]",
    ]
)


@PROPS
@given(st.lists(st.one_of(_TERMINAL, st.text(max_size=5)), max_size=60))
def test_escape_soup_never_leaks_an_escape_or_control_character(parts: list[str]) -> None:
    shown = strip_terminal("".join(parts))
    assert not any(c < " " and c not in "\n\t" for c in shown)
    assert not any("\x7f" <= c <= "\x9f" for c in shown)


@PROPS
@given(st.binary(max_size=500))
def test_corral_run_renders_every_event(data: bytes) -> None:
    human = HumanRenderer(
        out=Console(file=io.StringIO(), force_terminal=False),
        err=Console(file=io.StringIO(), force_terminal=False),
    )
    as_json = JsonRenderer(out=io.StringIO())
    for seq, event in enumerate(run([data], 2, data.decode("latin-1")), 1):
        envelope = Envelope(
            session_id="s", seq=seq, ts=datetime(2026, 1, 1, tzinfo=UTC), source="t", event=event
        )
        human.show(envelope)
        as_json.show(envelope)
