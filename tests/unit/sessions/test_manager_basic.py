from __future__ import annotations

from corral.events import SessionStarted, TextComplete, TurnCompleted
from corral.sessions import PromptState, SessionManager, SessionState

from .conftest import is_type, new_session, prompt_state, wait_for


async def test_prompt_round_trip_records_envelopes(manager: SessionManager) -> None:
    sid = await new_session(manager, model="m1")
    prompt = manager.send(sid, "hello")
    await wait_for(manager, sid, is_type("turn.completed"))
    events = manager.events(sid)
    seqs = [e.seq for e in events]
    assert seqs == list(range(1, len(seqs) + 1))
    assert isinstance(events[0].event, SessionStarted)
    texts = [e.event.text for e in events if isinstance(e.event, TextComplete)]
    assert texts == ["echo: hello"]
    assert any(isinstance(e.event, TurnCompleted) for e in events)
    assert manager.queue.get(prompt.id).state == PromptState.DELIVERED
    record = manager.get_session(sid)
    assert record.intent is None and record.allowed_commands == ()
    assert record.model == "m1"
    assert record.state == SessionState.IDLE
    assert record.agent_session_id
    assert record.agent_session_id.startswith("scripted-")
    await wait_for(manager, sid, prompt_state("delivered", prompt.id))
