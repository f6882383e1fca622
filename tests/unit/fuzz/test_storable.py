"""The two seams every line passes: ``loads`` (raises only BadJson) and ``storable`` (every event
the store can encode and read back as its own type)."""

from __future__ import annotations

import pytest

from corral._process._decode import MAX_DEPTH, BadJson, loads
from corral.events import (
    ApprovalResolved,
    Error,
    Event,
    TextDelta,
    ToolCallCompleted,
    ToolKind,
    ToolResult,
    Usage,
    decode_event,
    encode,
)
from corral.events._text import scrub, storable


def roundtrip(event: Event) -> Event:
    back = decode_event(encode(event))
    assert type(back) is type(event)
    return back


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'"A\\ud83d"', "A\ud83d"),  # kept: the parser's joiner pairs it with the next delta
        (b'{"a": "\xff"}', {"a": "\ufffd"}),
        (b'"\\ud83d\\ude00"', "\U0001f600"),
        (b"[" * MAX_DEPTH + b"]" * MAX_DEPTH, loads(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH)),
    ],
)
def test_loads_keeps_what_can_be_kept(data: bytes, expected: object) -> None:
    assert loads(data) == expected


@pytest.mark.parametrize(
    "data",
    [
        b'{"a": 1',
        b"NaN",
        b"",
        b"\xff\xfe",
        b"[" * 2000 + b"]" * 2000,
        b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1),
    ],
)
def test_loads_raises_only_badjson(data: bytes) -> None:
    with pytest.raises(BadJson):
        loads(data)


def test_wrong_field_types_are_repaired_not_dropped() -> None:
    event = storable(TextDelta(text=5, message_id=[1], raw={"x": 1}))  # type: ignore[arg-type]
    assert event == TextDelta(text="", raw={"x": 1})
    usage = storable(Usage(input_tokens="x", output_tokens=2**70, cost_usd=1, raw=None))  # type: ignore[arg-type]
    assert isinstance(usage, Usage) and usage.input_tokens is None and usage.cost_usd == 1
    roundtrip(usage)


def test_lone_surrogates_are_replaced_everywhere() -> None:
    event = storable(TextDelta(text="a\ud83d", raw={"k\udc80": ["\ude00"]}))
    assert event == TextDelta(text="a\ufffd", raw={"k\ufffd": ["\ufffd"]})
    roundtrip(event)


def test_nested_struct_fields_are_checked() -> None:
    bad = ToolCallCompleted(call_id="c", result=ToolResult(output=3, exit_code="1"), kind="edit")  # type: ignore[arg-type]
    fixed = storable(bad)
    assert isinstance(fixed, ToolCallCompleted) and fixed.kind is ToolKind.EDIT
    roundtrip(fixed)


def test_an_event_that_cannot_be_repaired_becomes_an_error() -> None:
    event = storable(ApprovalResolved(request_id="r", decision="maybe", raw=[1]))  # type: ignore[arg-type]
    assert isinstance(event, Error) and event.code == "invalid_event" and event.raw == [1]
    roundtrip(event)


def test_too_deep_raw_is_cut() -> None:
    deep: object = 1
    for _ in range(1200):
        deep = [deep]
    event = storable(TextDelta(text="t", raw=deep))
    assert isinstance(event, TextDelta) and event.text == "t"
    roundtrip(event)
    assert "…" in encode(event).decode()


def test_valid_events_are_returned_as_they_are() -> None:
    event = TextDelta(text="h\u00e9\U0001f600", message_id="m", raw={"a": [1, {"b": None}]})
    assert storable(event) is event


def test_scrub_makes_any_value_json() -> None:
    assert scrub({1: ("a\ud800",), "n": 2**80}) == {"1": ["a\ufffd"], "n": float(2**80)}
