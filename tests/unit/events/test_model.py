from datetime import UTC, datetime

import jsonschema
import msgspec
import pytest

from corral.events import (
    EVENT_TAGS,
    EVENT_TYPES,
    AgentInfo,
    Capabilities,
    EndReason,
    Envelope,
    Sequencer,
    SessionEnded,
    SessionStarted,
    TextDelta,
    ToolCallCompleted,
    ToolCallStarted,
    ToolKind,
    ToolResult,
    UnknownEvent,
    decode_envelope,
    decode_event,
    encode,
    event_from_builtins,
    events_schema,
    to_builtins,
)

AGENT = AgentInfo(
    agent_id="claude-code",
    name="Claude Code",
    version="2.1.197",
    capabilities=Capabilities(cancel=True, interact=True),
)


def test_every_event_type_has_a_unique_tag() -> None:
    assert len(EVENT_TAGS) == len(EVENT_TYPES)
    assert "unknown" in EVENT_TAGS


def test_events_are_immutable() -> None:
    ev = TextDelta(text="hi")
    with pytest.raises(AttributeError):
        ev.text = "ho"  # type: ignore[misc]


def test_round_trip_keeps_raw_and_type() -> None:
    raw = {"type": "assistant", "message": {"content": [{"type": "text", "text": "hi"}]}}
    ev = ToolCallStarted(call_id="c1", name="Write", kind=ToolKind.EDIT, file="a.txt", raw=raw)
    data = encode(ev)
    assert msgspec.json.decode(data)["type"] == "tool.started"
    back = decode_event(data)
    assert back == ev
    assert back.raw == raw


def test_unknown_type_decodes_to_unknown_event_not_an_exception() -> None:
    ev = decode_event(b'{"type": "vendor.future_thing", "x": 1}')
    assert isinstance(ev, UnknownEvent)
    assert ev.vendor_type == "vendor.future_thing"
    assert ev.raw == {"type": "vendor.future_thing", "x": 1}


def test_malformed_known_type_becomes_unknown() -> None:
    ev = event_from_builtins({"type": "text.delta", "text": 5})
    assert isinstance(ev, UnknownEvent)
    assert isinstance(event_from_builtins([1, 2]), UnknownEvent)


def test_sequencer_is_monotonic_per_session_and_clock_injectable() -> None:
    t = datetime(2026, 1, 1, tzinfo=UTC)
    seq = Sequencer("s1", "claude-code", clock=lambda: t)
    envs = [seq.wrap(TextDelta(text=str(i))) for i in range(5)]
    assert [e.seq for e in envs] == [1, 2, 3, 4, 5]
    assert all(e.ts == t and e.session_id == "s1" for e in envs)
    resumed = Sequencer("s1", "claude-code", start=5)
    assert resumed.wrap(TextDelta(text="x")).seq == 6


def test_envelope_round_trip_and_schema_validates_every_event() -> None:
    schema = events_schema()
    seq = Sequencer("s1", "claude-code")
    samples = [
        SessionStarted(agent=AGENT, cwd="/repo"),
        TextDelta(text="hi", message_id="m1"),
        ToolCallCompleted(call_id="c1", result=ToolResult(output="ok", exit_code=0)),
        SessionEnded(reason=EndReason.KILLED),
        UnknownEvent(raw={"a": 1}, vendor_type="x"),
    ]
    for ev in samples:
        env = seq.wrap(ev)
        jsonschema.validate(to_builtins(env), schema)
        back = decode_envelope(encode(env))
        assert back == env


def test_schema_rejects_an_event_missing_required_field() -> None:
    schema = events_schema()
    env = to_builtins(
        Envelope(
            session_id="s", seq=1, ts=datetime.now(UTC), source="x", event=TextDelta(text="hi")
        )
    )
    del env["event"]["text"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(env, schema)


def test_warning_and_error_events_keep_their_wire_tags_and_do_not_shadow_builtins() -> None:
    import builtins

    import msgspec

    import corral.events as events
    from corral.events import ErrorEvent, WarningEvent

    assert msgspec.json.encode(WarningEvent(message="w")) == b'{"type":"warning","message":"w"}'
    assert msgspec.json.decode(b'{"type":"error","message":"e"}', type=events.Event) == ErrorEvent(
        message="e"
    )
    assert "Warning" not in events.__all__ and "Error" not in events.__all__
    assert events.Warning is WarningEvent  # the old name still imports, for older code
    assert builtins.Warning is not WarningEvent
