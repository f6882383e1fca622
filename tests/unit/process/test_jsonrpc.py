"""JsonRpcClient against a tiny Python peer: requests, errors, server requests, timeouts, EOF."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from corral._process import METHOD_NOT_FOUND, JsonRpcClient, OverlongLine, ProcessTransport
from corral.errors import JsonRpcError, ProcessError, RequestTimeout

PEER = [sys.executable, str(Path(__file__).with_name("_rpc_peer.py"))]


class Recorder:
    def __init__(self) -> None:
        self.notifications: list[tuple[str, Any]] = []
        self.requests: list[tuple[str, Any]] = []
        self.other: list[bytes | OverlongLine] = []

    async def on_request(self, method: str, params: Any) -> Any:
        self.requests.append((method, params))
        if method == "client/ping":
            return {"pong": params}
        return METHOD_NOT_FOUND


@pytest.fixture
async def rpc() -> AsyncIterator[tuple[JsonRpcClient, Recorder]]:
    rec = Recorder()
    transport = ProcessTransport(PEER)
    await transport.start()
    client = JsonRpcClient(
        transport,
        on_request=rec.on_request,
        on_notification=lambda m, p: rec.notifications.append((m, p)),
        on_other=rec.other.append,
    )
    client.start()
    yield client, rec
    await client.close(grace=2)


async def test_request_gets_its_result(rpc: tuple[JsonRpcClient, Recorder]) -> None:
    client, _ = rpc
    assert await client.request("echo", {"x": [1, 2]}) == {"x": [1, 2]}
    assert await client.request("echo", "again") == "again"


async def test_error_response_raises_with_code_and_data(
    rpc: tuple[JsonRpcClient, Recorder],
) -> None:
    client, _ = rpc
    with pytest.raises(JsonRpcError) as info:
        await client.request("fail")
    assert info.value.code == 42
    assert info.value.data == {"why": "asked"}


async def test_server_request_is_answered(rpc: tuple[JsonRpcClient, Recorder]) -> None:
    client, rec = rpc
    reply = await client.request("ask_client", timeout=5)
    assert reply["result"] == {"pong": {"q": 1}}
    assert rec.requests == [("client/ping", {"q": 1})]


async def test_unknown_server_method_gets_method_not_found(
    rpc: tuple[JsonRpcClient, Recorder],
) -> None:
    client, _ = rpc
    reply = await client.request("ask_unknown", timeout=5)
    assert reply["error"]["code"] == -32601
    assert "weird/method" in reply["error"]["message"]


async def test_notifications_and_non_protocol_lines(rpc: tuple[JsonRpcClient, Recorder]) -> None:
    client, rec = rpc
    await client.notify("hello", {"a": 1})
    assert await client.request("noise") == "ok"
    assert ("got_notification", {"method": "hello", "has_jsonrpc": True}) in rec.notifications
    assert ("tick", [1]) in rec.notifications
    assert rec.other == [b"not json at all"]


async def test_timeout_is_a_clear_error(rpc: tuple[JsonRpcClient, Recorder]) -> None:
    client, _ = rpc
    with pytest.raises(RequestTimeout) as info:
        await client.request("silent", timeout=0.2)
    assert info.value.method == "silent"
    assert isinstance(info.value, TimeoutError)
    assert await client.request("echo", 1) == 1  # the client still works


async def test_peer_exit_fails_pending_requests_with_stderr(
    rpc: tuple[JsonRpcClient, Recorder],
) -> None:
    client, _ = rpc
    with pytest.raises(ProcessError) as info:
        await client.request("die", timeout=10)
    await client.eof.wait()
    await client.transport.wait(5)
    assert "peer crashed" in client.transport.stderr_tail
    assert "closed" in str(info.value)
    with pytest.raises(ProcessError):
        await client.request("echo", 1)


async def test_jsonrpc_field_can_be_left_out() -> None:
    transport = ProcessTransport(PEER)
    await transport.start()
    seen: list[tuple[str, Any]] = []
    client = JsonRpcClient(
        transport, jsonrpc_field=False, on_notification=lambda m, p: seen.append((m, p))
    )
    client.start()
    try:
        await client.notify("hi")
        assert await client.request("echo", 5) == 5
        assert seen == [("got_notification", {"method": "hi", "has_jsonrpc": False})]
    finally:
        assert await client.close(grace=2) == 0
