"""Driver level: malformed lines from a real child process end neither the JSON-RPC read loop nor a
stream-json session, and a session that survived them is never recorded as ``killed``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from corral._process import JsonRpcClient, OverlongLine, ProcessTransport
from corral.adapters.claude import ClaudeAdapter
from corral.events import (
    EndReason,
    Error,
    Event,
    SessionEnded,
    StopReason,
    TextDelta,
    TurnCompleted,
)
from corral.testing.fuzz import unstorable

CLI = Path(__file__).with_name("_malformed_cli.py")


@pytest.mark.timeout(30)
async def test_unhashable_and_unknown_ids_do_not_end_the_jsonrpc_read_loop() -> None:
    other: list[bytes | OverlongLine] = []
    transport = ProcessTransport([sys.executable, str(CLI), "jsonrpc"])
    await transport.start()
    client = JsonRpcClient(transport, on_other=other.append)
    client.start()
    try:
        assert await client.request("echo", {"n": 1}, timeout=10) == {"n": 1}
        assert await client.request("echo", {"n": 2}, timeout=10) == {"n": 2}
    finally:
        await client.close(grace=2)
    assert b'"id": [1], "result"' in b"".join(o for o in other if isinstance(o, bytes))
    assert len(other) == 2 * 6  # four bad ids, a request with a list id, an unknown error id


class MalformedClaude(ClaudeAdapter):
    """ClaudeAdapter pointed at the malformed-line script instead of ``claude``."""

    def __init__(self) -> None:
        super().__init__(binary=sys.executable, extra_args=(), base_env={"PATH": "/usr/bin:/bin"})

    def build(self, request):  # type: ignore[no-untyped-def]
        launch = super().build(request)
        return type(launch)(
            argv=(sys.executable, str(CLI), "stream-json"), env=launch.env, cwd=None
        )


@pytest.mark.timeout(30)
async def test_a_claude_session_goes_on_after_malformed_lines_and_is_not_killed() -> None:
    adapter = MalformedClaude()
    await adapter.start("t")
    await adapter.send("go")
    events: list[Event] = []
    async for event in adapter.stream():
        events.append(event)
        if isinstance(event, TurnCompleted):
            await adapter.stop()
    assert all(unstorable(e) is None for e in events)
    turn = next(e for e in events if isinstance(e, TurnCompleted))
    assert turn.stop_reason is StopReason.END_TURN
    assert turn.result_text == "A\U0001f600B"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "A\U0001f600B"
    ends = [e for e in events if isinstance(e, SessionEnded)]
    assert [e.reason for e in ends] == [EndReason.COMPLETED]
    codes = [e.code for e in events if isinstance(e, Error)]
    assert "invalid_json" in codes  # the truncated result and the 1,500-deep line
    assert "parse_error" not in codes  # every malformed line was understood, none hit the net


@pytest.mark.timeout(30)
async def test_a_raising_handler_does_not_end_the_jsonrpc_read_loop() -> None:
    calls: list[str] = []

    def explode(method: str, params: object) -> None:
        calls.append(method)
        raise RuntimeError("handler bug")

    transport = ProcessTransport([sys.executable, str(CLI), "jsonrpc"])
    await transport.start()
    client = JsonRpcClient(transport, on_notification=explode)
    client.start()
    try:
        await client.notify("ping", {"n": 0})  # the peer ignores it; then a real round trip:
        assert await client.request("echo", {"n": 3}, timeout=10) == {"n": 3}
        assert await client.request("echo", {"n": 4}, timeout=10) == {"n": 4}
    finally:
        await client.close(grace=2)
    assert calls == ["note", "note"]  # each raised, and the loop read on
