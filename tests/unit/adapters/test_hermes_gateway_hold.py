"""A prompt sent to ``hermes-gateway`` while a turn runs is held by corral, not sent into the turn
(the gateway's default ``busy_input_mode`` would interrupt it), and submitted once the gateway
lets go of the session. A stand-in gateway (a test double, not a fixture) plays the protocol."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from corral.adapters import hermes_gateway
from corral.adapters.base import iter_events
from corral.adapters.hermes_gateway import HermesGatewayAdapter
from corral.events import Event, SessionEnded, TurnCompleted


class StandIn:
    """Answers session.create and prompt.submit; the test decides when a turn ends."""

    def __init__(self, argv: Sequence[str], **_: Any) -> None:
        self.argv = list(argv)
        self.killed_by_us = False
        self.out: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.prompts: list[str] = []
        self.code: int | None = None

    # ── the transport ──
    @property
    def pid(self) -> int | None:
        return None

    @property
    def returncode(self) -> int | None:
        return self.code

    @property
    def stderr_tail(self) -> str:
        return ""

    async def start(self) -> None:
        self.event("gateway.ready", {"skin": {}})

    async def lines(self) -> AsyncIterator[bytes]:
        while (line := await self.out.get()) is not None:
            yield line

    async def write_line(self, data: bytes) -> None:
        msg = json.loads(data)
        method, params = msg["method"], msg.get("params") or {}
        if method == "session.create":
            self.reply(msg["id"], {"session_id": "s1", "stored_session_id": "k1", "info": {}})
        elif method == "prompt.submit":
            self.prompts.append(params["text"])
            self.reply(msg["id"], {"status": "streaming"})
            self.event("message.start")
            self.event("message.delta", {"text": "working"})

    async def close_stdin(self) -> None:
        self.code = 0
        self.out.put_nowait(None)

    async def wait(self, timeout: float | None = None) -> int:
        return self.code or 0

    async def kill(self, grace: float = 3.0) -> int | None:
        await self.close_stdin()
        return 0

    # ── what the gateway prints ──
    def reply(self, rid: int, result: Mapping[str, Any]) -> None:
        self.out.put_nowait(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode())

    def event(self, etype: str, payload: Any = None) -> None:
        params: dict[str, Any] = {"type": etype, "session_id": "s1"}
        if payload is not None:
            params["payload"] = payload
        line = {"jsonrpc": "2.0", "method": "event", "params": params}
        self.out.put_nowait(json.dumps(line).encode())

    def end_turn(self, *, info: bool = True) -> None:
        self.event("message.complete", {"text": "done", "status": "complete"})
        if info:
            self.event("session.info", {"model": "m"})


async def _started(tmp_path: Path) -> tuple[HermesGatewayAdapter, StandIn, list[Event]]:
    script = tmp_path / "hermes"
    (tmp_path / "python3").write_text("")
    script.write_text(f"#!{tmp_path / 'python3'}\n")
    made: list[StandIn] = []

    def factory(argv: Sequence[str], **kw: Any) -> StandIn:
        made.append(StandIn(argv, **kw))
        return made[-1]

    adapter = HermesGatewayAdapter(cwd=str(tmp_path), binary=str(script))
    adapter.transport_factory = factory  # type: ignore[assignment]
    await asyncio.wait_for(adapter.start("s"), 5)
    events: list[Event] = []

    async def collect() -> None:
        async for e in iter_events(adapter):
            events.append(e)

    task = asyncio.create_task(collect())
    adapter._collector = task  # type: ignore[attr-defined]  # kept alive for the test
    return adapter, made[0], events


async def _until(check: Any, timeout: float = 5.0) -> None:
    """Poll ``check()`` (state of the driver, not an event we could await), bounded."""
    async with asyncio.timeout(timeout):
        while not check():  # noqa: ASYNC110
            await asyncio.sleep(0.01)


async def test_a_prompt_during_a_turn_waits_for_the_gateway_to_be_idle(tmp_path: Path) -> None:
    adapter, gateway, events = await _started(tmp_path)
    await adapter.send("first")
    await _until(lambda: adapter.parser.streaming)
    await adapter.send("second")
    await asyncio.sleep(0.2)
    assert gateway.prompts == ["first"]  # held: nothing was sent into the running turn
    gateway.end_turn(info=False)
    await _until(lambda: any(isinstance(e, TurnCompleted) for e in events))
    await asyncio.sleep(0.2)
    assert gateway.prompts == ["first"]  # the turn's thread has not let go of the session yet
    gateway.event("session.info", {"model": "m"})
    await _until(lambda: gateway.prompts == ["first", "second"])
    gateway.end_turn()
    await _until(lambda: len([e for e in events if isinstance(e, TurnCompleted)]) == 2)
    await adapter.stop()
    await _until(lambda: bool(events) and isinstance(events[-1], SessionEnded))


async def test_without_session_info_a_held_prompt_goes_out_after_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hermes_gateway, "IDLE_WAIT", 0.3)
    adapter, gateway, _ = await _started(tmp_path)
    await adapter.send("first")
    await _until(lambda: adapter.parser.streaming)
    await adapter.send("second")
    gateway.end_turn(info=False)
    await _until(lambda: gateway.prompts == ["first", "second"], timeout=3.0)
    await adapter.stop()


async def test_stop_drops_a_held_prompt(tmp_path: Path) -> None:
    adapter, gateway, events = await _started(tmp_path)
    await adapter.send("first")
    await _until(lambda: adapter.parser.streaming)
    await adapter.send("second")
    await adapter.stop()
    await _until(lambda: bool(events) and isinstance(events[-1], SessionEnded))
    assert gateway.prompts == ["first"]
    assert (await adapter.query_status())["held_prompts"] == 0
