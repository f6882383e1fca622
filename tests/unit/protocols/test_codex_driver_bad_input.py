"""The Codex drivers against a misbehaving stand-in process (transport level): garbage lines, an
unknown server request, the process dying mid-turn. Each must end cleanly, never hang."""

from __future__ import annotations

import asyncio
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from corral.adapters.base import BaseAdapter
from corral.adapters.codex import CodexAdapter, CodexExecAdapter
from corral.errors import ProcessError
from corral.events import (
    EndReason,
    Event,
    SessionEnded,
    StopReason,
    TextComplete,
    TurnCompleted,
    UnknownEvent,
)

STANDIN = Path(__file__).with_name("_codex_standin.py")


@pytest.fixture
def standin(tmp_path: Path) -> str:
    script = tmp_path / "codex"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{STANDIN}" "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


async def until(adapter: BaseAdapter, stop: type[Any], timeout: float = 15.0) -> list[Event]:
    """Events up to and including the first ``stop`` event (TurnCompleted or SessionEnded)."""
    out: list[Event] = []

    async def read() -> None:
        async for event in adapter.stream():
            out.append(event)
            if isinstance(event, stop | SessionEnded):
                return

    await asyncio.wait_for(read(), timeout)
    return out


def make(standin: str, mode: str, tmp_path: Path) -> CodexAdapter:
    return CodexAdapter(cwd=str(tmp_path), binary=standin, env={"STANDIN_MODE": mode})


async def test_garbage_lines_are_kept_and_the_session_goes_on(standin: str, tmp_path: Path) -> None:
    adapter = make(standin, "garbage", tmp_path)
    info = await adapter.start("s")
    assert info.version == "0.0.1" and info.agent_session_id == "thr-standin"
    await adapter.send("hi")
    events = await until(adapter, TurnCompleted)
    junk = [e.raw for e in events if isinstance(e, UnknownEvent) and e.vendor_type == "non-json"]
    assert junk == ["this is not json", "[1, 2]", "{broken"]  # the blank line is skipped
    assert [e.text for e in events if isinstance(e, TextComplete)] == ["ok"]
    assert events[-1].stop_reason is StopReason.END_TURN  # type: ignore[union-attr]
    status = await adapter.query_status()
    assert status["alive"] and not status["busy"] and status["thread_id"] == "thr-standin"
    await adapter.send("again")
    assert (await until(adapter, TurnCompleted))[-1].stop_reason is StopReason.END_TURN  # type: ignore[union-attr]
    await adapter.stop()
    (ended,) = [e for e in await until(adapter, SessionEnded) if isinstance(e, SessionEnded)]
    assert ended.reason is EndReason.COMPLETED and ended.exit_code == 0


async def test_unknown_server_request_gets_an_error_and_the_session_goes_on(
    standin: str, tmp_path: Path
) -> None:
    adapter = make(standin, "unknown-request", tmp_path)
    await adapter.start("s")
    await adapter.send("hi")
    events = await until(adapter, TurnCompleted)
    unknown = [e for e in events if isinstance(e, UnknownEvent)]
    assert [e.vendor_type for e in unknown] == ["request:item/tool/teleport"]
    # the stand-in echoes the error code our JSON-RPC reply carried
    assert [e.text for e in events if isinstance(e, TextComplete)] == ["reply:-32601"]
    await adapter.send("and now?")
    assert (await until(adapter, TurnCompleted))[-1].stop_reason is StopReason.END_TURN  # type: ignore[union-attr]
    await adapter.stop()


async def test_process_dying_mid_turn_fails_the_turn_with_stderr(
    standin: str, tmp_path: Path
) -> None:
    adapter = make(standin, "die", tmp_path)
    await adapter.start("s")
    await adapter.send("hi")
    events = await until(adapter, SessionEnded)
    (turn_end,) = [e for e in events if isinstance(e, TurnCompleted)]
    assert turn_end.stop_reason is StopReason.ERROR
    assert "fatal: standin crashed mid-turn" in (turn_end.error or "")
    ended = events[-1]
    assert isinstance(ended, SessionEnded)
    assert (await adapter.query_status())["alive"] is False
    assert ended.reason is EndReason.FAILED and ended.exit_code == 3
    assert "standin crashed" in (ended.stderr_tail or "")
    await adapter.stop()  # idempotent after the process is gone


async def test_start_fails_with_the_cli_s_own_words(standin: str, tmp_path: Path) -> None:
    adapter = make(standin, "refuse", tmp_path)
    with pytest.raises(ProcessError) as caught:
        await adapter.start("s")
    assert caught.value.process_exit_code == 1
    assert "no longer supported" in caught.value.stderr
    assert (await adapter.query_status())["alive"] is False
    await adapter.stop()  # nothing left to stop, and no error


async def test_exec_process_dying_mid_turn(standin: str, tmp_path: Path) -> None:
    ids: list[str] = []
    adapter = CodexExecAdapter(
        cwd=str(tmp_path), binary=standin, env={"STANDIN_MODE": "die"}, on_session_id=ids.append
    )
    await adapter.start("s")
    await adapter.send("hi")
    events = await until(adapter, TurnCompleted)
    assert ids == ["thr-standin"]
    assert any(isinstance(e, UnknownEvent) and e.vendor_type == "non-json" for e in events)
    turn_end = events[-1]
    assert isinstance(turn_end, TurnCompleted) and turn_end.stop_reason is StopReason.ERROR
    assert "code 4" in (turn_end.error or "") and "exec standin crashed" in (turn_end.error or "")
    await adapter.stop()


async def test_exec_follow_up_resumes_the_thread(standin: str, tmp_path: Path) -> None:
    argvs: list[list[str]] = []
    adapter = CodexExecAdapter(cwd=str(tmp_path), binary=standin)
    await adapter.start("s")
    for prompt in ("one", "two"):
        await adapter.send(prompt)
        assert adapter._transport is not None
        argvs.append(adapter._transport.argv)
        assert (await until(adapter, TurnCompleted))[-1].stop_reason is StopReason.END_TURN  # type: ignore[union-attr]
    assert "resume" not in argvs[0]
    assert argvs[1][-4:] == ["resume", "thr-standin", "--", "two"]
    await adapter.stop()
