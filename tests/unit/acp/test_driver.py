"""The ACP driver against a stand-in agent (``_standin_agent.py``): a misbehaving peer yields a
clear ``Error`` and a clean ``SessionEnded``; approvals and cancel take the ACP paths."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from corral.adapters._acp import AcpAdapter
from corral.adapters.base import iter_events
from corral.events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    EndReason,
    ErrorEvent,
    Event,
    SessionEnded,
    StopReason,
    TextDelta,
    ToolCallCompleted,
    ToolCallFailed,
    TurnCompleted,
)

AGENT = Path(__file__).with_name("_standin_agent.py")


class StandIn(AcpAdapter):
    agent_id = "standin"
    display_name = "stand-in"
    cli_binary = sys.executable
    acp_args = (str(AGENT),)
    provides_models = False
    provides_usage = False


async def run_turn(adapter: AcpAdapter, text: str, on_event=None) -> list[Event]:  # type: ignore[no-untyped-def]
    events: list[Event] = []
    await adapter.send(text)
    async for event in iter_events(adapter):
        events.append(event)
        if on_event is not None:
            await on_event(event)
        if isinstance(event, TurnCompleted | SessionEnded):
            break
    return events


@pytest.fixture
async def adapter(tmp_path: Path):  # type: ignore[no-untyped-def]
    a = StandIn(cwd=str(tmp_path))
    await a.start("t")
    yield a
    await a.stop()


def texts(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def drain_until_end(adapter: AcpAdapter) -> list[Event]:
    out: list[Event] = []
    async for event in iter_events(adapter):
        out.append(event)
        if isinstance(event, SessionEnded):
            break
    return out


async def test_invalid_jsonrpc_is_an_error_event_and_the_turn_goes_on(adapter: AcpAdapter) -> None:
    events = await run_turn(adapter, "garbage")
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert [e.code for e in errors] == ["invalid_jsonrpc", "invalid_jsonrpc"]
    assert "not JSON-RPC" in errors[0].message and not errors[0].fatal
    assert texts(events) == "after garbage"
    assert isinstance(events[-1], TurnCompleted) and events[-1].stop_reason is StopReason.END_TURN
    await adapter.stop()
    ended = await drain_until_end(adapter)
    assert isinstance(ended[-1], SessionEnded) and ended[-1].reason is EndReason.COMPLETED


async def test_unknown_client_method_is_refused_and_reported(adapter: AcpAdapter) -> None:
    events = await run_turn(adapter, "unknown")
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert len(errors) == 1 and errors[0].code == "unknown_method"
    assert "x/unknown_method" in errors[0].message
    assert texts(events) == "error -32601"


async def test_exit_mid_turn_ends_turn_and_session(adapter: AcpAdapter) -> None:
    await adapter.send("die")
    events = await asyncio.wait_for(drain_until_end(adapter), 20)
    turn_end = [e for e in events if isinstance(e, TurnCompleted)]
    assert len(turn_end) == 1 and turn_end[0].stop_reason is StopReason.ERROR
    assert "exited" in (turn_end[0].error or "")
    fatal = [e for e in events if isinstance(e, ErrorEvent) and e.fatal]
    assert fatal and fatal[0].code == "agent_exited"
    end = events[-1]
    assert isinstance(end, SessionEnded)
    assert end.reason is EndReason.FAILED and end.exit_code == 7
    assert [type(e) for e in events].index(TurnCompleted) < len(events) - 1


@pytest.mark.parametrize(
    ("decision", "option", "expected"),
    [
        (ApprovalDecision.ALLOW, None, "yes"),
        (ApprovalDecision.ALLOW_ALWAYS, None, "always"),
        (ApprovalDecision.DENY, None, "no"),
        (ApprovalDecision.ALLOW, "always", "always"),
    ],
)
async def test_approval_picks_the_agents_option(
    adapter: AcpAdapter, decision: ApprovalDecision, option: str | None, expected: str
) -> None:
    async def answer(event: Event) -> None:
        if isinstance(event, ApprovalRequested):
            assert [o.id for o in event.options] == ["yes", "always", "no"]
            assert event.cmd == "rm -rf x" and event.call_id == "c1"
            await adapter.respond_approval(event.request_id, decision, option_id=option)

    events = await run_turn(adapter, "ask", answer)
    assert f'"optionId": "{expected}"' in texts(events)
    resolved = [e for e in events if isinstance(e, ApprovalResolved)]
    assert len(resolved) == 1 and resolved[0].option_id == expected
    if decision is ApprovalDecision.DENY:
        failed = [e for e in events if isinstance(e, ToolCallFailed)]
        assert failed and failed[0].denied
    else:
        assert [e for e in events if isinstance(e, ToolCallCompleted)]


async def test_interrupt_answers_pending_permission_cancelled(adapter: AcpAdapter) -> None:
    async def cancel(event: Event) -> None:
        if isinstance(event, ApprovalRequested):
            await adapter.interrupt()

    events = await run_turn(adapter, "ask-cancel", cancel)
    assert '"outcome": "cancelled"' in texts(events)
    resolved = [e for e in events if isinstance(e, ApprovalResolved)]
    assert resolved and resolved[0].decision is ApprovalDecision.CANCEL
    end = events[-1]
    assert isinstance(end, TurnCompleted) and end.stop_reason is StopReason.CANCELLED
    failed = [e for e in events if isinstance(e, ToolCallFailed)]
    assert failed and failed[0].denied


async def test_fs_read_outside_root_refused_over_the_wire(adapter: AcpAdapter) -> None:
    events = await run_turn(adapter, "outside")
    assert texts(events) == "error -32602"


async def test_tap_sees_every_line_both_ways(tmp_path: Path) -> None:
    seen: list[tuple[str, bytes]] = []
    a = StandIn(cwd=str(tmp_path), tap=lambda d, line: seen.append((d, line)))
    await a.start("t")
    await run_turn(a, "hello")
    await a.stop()
    directions = [d for d, _ in seen]
    assert directions.count("in") == 3  # initialize, session/new, session/prompt
    assert directions[-1] == "exit"
    assert any(b'"session/update"' in line for d, line in seen if d == "out")


async def test_send_acknowledged_acks_when_the_prompt_goes_out(adapter: AcpAdapter) -> None:
    acked: list[bool] = []
    await adapter.send_acknowledged("hello", None, ack=lambda: acked.append(True))
    events: list[Event] = []
    async for event in iter_events(adapter):
        events.append(event)
        if isinstance(event, TurnCompleted):
            break
    assert acked == [True]
    assert texts(events) == "ok"


async def test_set_mode_and_model_use_what_the_session_offers(adapter: AcpAdapter) -> None:
    from corral.events import StatusChanged

    await adapter.set_permission_mode("plan")
    await adapter.set_model("m2")
    assert adapter.model == "m2"
    seen: list[Event] = []
    async for event in iter_events(adapter):
        seen.append(event)
        if isinstance(event, TextDelta):
            break
    modes = [e for e in seen if isinstance(e, StatusChanged) and e.status == "mode"]
    assert modes and modes[0].message == "plan"
    assert texts(seen) == "config model=m2"


class NeedsAuth(StandIn):
    auth_methods = ("key",)


async def test_authenticates_when_session_new_says_so(tmp_path: Path) -> None:
    ids: list[str] = []
    a = NeedsAuth(cwd=str(tmp_path), env={"STANDIN_AUTH": "1"}, on_session_id=ids.append)
    await a.start("t")
    assert ids == ["s1"]
    events = await run_turn(a, "hello")
    await a.stop()
    assert texts(events) == "ok"


async def test_auth_required_without_a_usable_method_fails_start(tmp_path: Path) -> None:
    from corral.errors import SpawnError

    a = StandIn(cwd=str(tmp_path), env={"STANDIN_AUTH": "1"})
    with pytest.raises(SpawnError, match="Authentication required"):
        await a.start("t")


async def test_resume_without_load_uses_session_resume(tmp_path: Path) -> None:
    ids: list[str] = []
    a = StandIn(cwd=str(tmp_path), resume_session_id="old-7", on_session_id=ids.append)
    info = await a.start("t")
    assert ids == ["old-7"] and info.agent_session_id == "old-7"
    seen: list[Event] = []
    async for event in iter_events(a):
        seen.append(event)
        if isinstance(event, TextDelta):
            break
    await a.stop()
    assert texts(seen) == "resumed old-7"


async def test_terminal_over_the_wire(adapter: AcpAdapter) -> None:
    events = await run_turn(adapter, "term")
    assert texts(events) == '[0, "6789", true, true]'


async def test_resume_unsupported_raises_and_leaves_no_process(tmp_path: Path) -> None:
    from corral.errors import UnsupportedOperation

    a = StandIn(cwd=str(tmp_path), resume_session_id="x", env={"STANDIN_NO_RESUME": "1"})
    with pytest.raises(UnsupportedOperation):
        await a.start("t")
    assert a._transport is not None and a._transport.returncode is not None


async def test_usage_per_turn_and_summed(adapter: AcpAdapter) -> None:
    from corral.events import Usage

    first = await run_turn(adapter, "hello")
    await run_turn(adapter, "hello")
    usage = [e for e in first if isinstance(e, Usage)]
    assert [(u.input_tokens, u.output_tokens) for u in usage] == [(3, 2)]
    totals = await adapter.get_usage()
    assert (totals.input_tokens, totals.output_tokens, totals.turns) == (6, 4, 2)
