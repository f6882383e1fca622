"""The one request/response correlator behind the JSON-RPC client, Claude's control channel and Pi."""

from __future__ import annotations

import asyncio

import pytest

from corral._process import Correlator
from corral.errors import ProcessError, RequestTimeout


async def test_an_answer_reaches_its_request_and_the_entry_is_gone() -> None:
    calls: Correlator[str] = Correlator(lambda n: f"req-{n}")
    sent: list[str] = []

    async def send(key: str) -> None:
        sent.append(key)

    task = asyncio.create_task(calls.call(send, timeout=5, what="ping"))
    await asyncio.sleep(0)
    assert sent == ["req-1"] and "req-1" in calls
    assert calls.resolve("nobody", 1) is False
    assert calls.resolve("req-1", {"ok": True}) is True
    assert await task == {"ok": True}
    assert len(calls) == 0
    assert calls.resolve("req-1", "late") is False  # a late answer is the caller's to report


async def test_reject_timeout_and_fail_all() -> None:
    calls: Correlator[int] = Correlator(int)

    async def send(key: int) -> None:
        return None

    rejected = asyncio.create_task(calls.call(send, timeout=5, what="a"))
    await asyncio.sleep(0)
    calls.reject(1, ValueError("no"))
    with pytest.raises(ValueError, match="no"):
        await rejected
    with pytest.raises(RequestTimeout, match="'b'"):
        await calls.call(send, timeout=0.01, what="b")
    pending = [asyncio.create_task(calls.call(send, timeout=5, what="c")) for _ in range(2)]
    await asyncio.sleep(0)
    calls.fail_all(ProcessError("gone"))
    for task in pending:
        with pytest.raises(ProcessError):
            await task
    assert len(calls) == 0


async def test_a_failed_send_leaves_nothing_behind() -> None:
    calls: Correlator[int] = Correlator(int)

    async def send(key: int) -> None:
        raise ProcessError("stdin closed")

    with pytest.raises(ProcessError):
        await calls.call(send, timeout=5, what="x")
    assert len(calls) == 0
