"""An emoji whose UTF-16 surrogate pair a model stream split across two deltas (valid JSON:
``"A\\ud83d"`` then ``"\\ude00B"``) comes out of every parser as the one right character; a half
that never pairs becomes U+FFFD. Lines go through the drivers' decoder, as on the wire."""

from __future__ import annotations

from typing import Any

import pytest

from corral._process._decode import loads
from corral.events import Event, ReasoningDelta, TextComplete, TextDelta, decode_event, encode
from corral.events._text import SurrogateJoiner, repair_text
from corral.protocols.acp import AcpParser
from corral.protocols.claude_stream_json import ClaudeStreamParser
from corral.protocols.codex_app_server import AppServerParser
from corral.protocols.codex_exec import ExecParser
from corral.protocols.opencode_sse import OpenCodeSseParser
from corral.protocols.pi_rpc import PiRpcParser
from corral.testing.fuzz import acp_feed

EMOJI = "\U0001f600"
HALVES = ('"A\\ud83d"', '"\\ude00B"')


def claude_lines(halves: tuple[str, ...]) -> list[str]:
    start = '{"type":"stream_event","event":{"type":"message_start","message":{"id":"m1"}}}'
    return [start] + [
        '{"type":"stream_event","event":{"type":"content_block_delta","index":0,'
        f'"delta":{{"type":"{kind}_delta","{kind}":{h}}}}}}}'
        for kind in ("text", "thinking")
        for h in halves
    ]


def codex_lines(halves: tuple[str, ...]) -> list[str]:
    return [
        f'{{"method":"item/{m}","params":{{"threadId":"t","itemId":"i","delta":{h}}}}}'
        for m in ("agentMessage/delta", "reasoning/textDelta")
        for h in halves
    ]


def acp_lines(halves: tuple[str, ...]) -> list[str]:
    return [
        '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
        f'{{"sessionUpdate":"{kind}","content":{{"type":"text","text":{h}}}}}}}}}'
        for kind in ("agent_message_chunk", "agent_thought_chunk")
        for h in halves
    ]


def opencode_lines(halves: tuple[str, ...]) -> list[str]:
    return [
        '{"type":"message.part.delta","properties":{"sessionID":"s","messageID":"m",'
        f'"partID":"p","field":"text","delta":{h}}}}}'
        for h in halves
    ]


def pi_lines(halves: tuple[str, ...]) -> list[str]:
    return [
        f'{{"type":"message_update","assistantMessageEvent":{{"type":"{kind}_delta","delta":{h}}}}}'
        for kind in ("text", "thinking")
        for h in halves
    ]


def end(parser: Any) -> list[Event]:
    """The end of the turn: ACP's is the ``session/prompt`` result, the others' ``finish``."""
    if isinstance(parser, AcpParser):
        return parser.prompt_result({"stopReason": "end_turn"})
    events: list[Event] = parser.finish()
    return events


PARSERS: dict[str, tuple[Any, Any]] = {
    "claude": (ClaudeStreamParser, claude_lines),
    "codex-app-server": (AppServerParser, codex_lines),
    "acp": (AcpParser, acp_lines),  # fed as the driver does: corral.testing.fuzz.acp_feed
    "opencode-sse": (lambda: OpenCodeSseParser("s"), opencode_lines),
    "pi-rpc": (PiRpcParser, pi_lines),
}


def feed(make: Any, lines: list[str]) -> list[Event]:
    parser = make()
    events: list[Event] = []
    for line in lines:
        obj = loads(line.encode())
        events += acp_feed(parser, obj) if isinstance(parser, AcpParser) else parser.feed(obj)
    events += end(parser)
    for event in events:
        assert type(decode_event(encode(event))) is type(event)  # storable
    return events


def streamed(events: list[Event], cls: type[TextDelta] | type[ReasoningDelta]) -> str:
    return "".join(e.text for e in events if isinstance(e, cls))


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_a_pair_split_across_deltas_is_joined(name: str) -> None:
    make, lines = PARSERS[name]
    events = feed(make, lines(HALVES))
    assert streamed(events, TextDelta) == f"A{EMOJI}B"
    if name != "opencode-sse":  # its delta events carry no reasoning
        assert streamed(events, ReasoningDelta) == f"A{EMOJI}B"
    for event in events:
        if isinstance(event, TextComplete):
            assert event.text == f"A{EMOJI}B"


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_a_half_that_never_pairs_is_replaced(name: str) -> None:
    make, lines = PARSERS[name]
    events = feed(make, lines(('"A\\ude00"', '"\\ud83dB"', '"C"')))
    text = streamed(events, TextDelta)
    assert text == "A\ufffd\ufffdBC"


def test_codex_exec_complete_text_with_a_lone_half_is_repaired() -> None:
    line = '{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"A\\ud83d"}}'
    events = ExecParser().feed(loads(line.encode()))
    assert [e.text for e in events if isinstance(e, TextComplete)] == ["A\ufffd"]
    pair = '{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"A\\ud83d\\ude00"}}'
    events = ExecParser().feed(loads(pair.encode()))
    assert [e.text for e in events if isinstance(e, TextComplete)] == [f"A{EMOJI}"]


def test_joiner_keeps_streams_apart_and_repair_joins_written_pairs() -> None:
    joiner = SurrogateJoiner()
    assert joiner.join("x\ud83d", "a") == "x"
    assert joiner.join("y", "b") == "y"
    assert joiner.join("\ude00", "a") == EMOJI
    assert joiner.join(None, "a") == ""
    assert repair_text("\ud83d\ude00\ud83d") == EMOJI + "\ufffd"


def test_acp_message_ending_on_a_first_half_shows_a_replacement() -> None:
    parser = AcpParser()
    events: list[Event] = []
    for line in acp_lines(('"A\\ud83d"',))[:1]:
        events += acp_feed(parser, loads(line.encode()))
    events += end(parser)
    assert streamed(events, TextDelta) == "A\ufffd"
    assert [e.text for e in events if isinstance(e, TextComplete)] == ["A\ufffd"]
