"""Under an intent, the session runner denies a forbidden approval itself (a warning, never a
card) and routes a granted one to a person; intents and launch policies are checked up front."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest

from corral.errors import ConfigError, IntentRefused
from corral.events import ApprovalDecision, Envelope
from corral.intents import Intent, Rendering
from corral.sessions import AdapterResolver, SessionManager, SessionSpec
from corral.testing.scripted_adapter import ScriptedAdapter

WAIT = 10.0


def is_type(kind: str) -> Callable[[Envelope], bool]:
    return lambda env: tag(env) == kind


def tag(env: Envelope) -> str:
    return str(env.event.__struct_config__.tag)


async def wait_for(
    mgr: SessionManager, sid: str, predicate: Callable[[Envelope], bool]
) -> list[Envelope]:
    async def first() -> list[Envelope]:
        async for env in mgr.subscribe(sid):
            if predicate(env):
                return [env]
        raise AssertionError("the session ended first")

    return await asyncio.wait_for(first(), WAIT)


def render(intent: Intent, allowed: object, cwd: str) -> Rendering:
    return Rendering(intent=intent)


class Guarded(ScriptedAdapter):
    """The scripted agent, offered every intent: only corral's guard stands in its way."""

    enforceable_intents = frozenset(Intent)
    intent_renderer = render


@pytest.fixture
async def manager(tmp_path: Path) -> AsyncIterator[SessionManager]:
    resolver = AdapterResolver(
        {"scripted": ScriptedAdapter.configured(), "guarded": Guarded.configured()},
        use_env=False,
        use_entry_points=False,
    )
    async with SessionManager(tmp_path / "c.db", resolver=resolver) as mgr:
        yield mgr


async def test_a_forbidden_approval_is_denied_and_never_a_card(
    manager: SessionManager, tmp_path: Path
) -> None:
    record = await manager.create_session(
        SessionSpec(adapter_id="guarded", cwd=str(tmp_path), intent=Intent.ASK)
    )
    assert record.intent is Intent.ASK
    manager.send(record.id, "[approve] run it")
    await wait_for(manager, record.id, is_type("turn.completed"))
    types = [tag(e) for e in manager.events(record.id)]
    assert "approval.requested" not in types
    warning = next(e.event for e in manager.events(record.id) if tag(e) == "warning")
    assert warning.code == "intent_denied" and "echo approved" in warning.message  # type: ignore[attr-defined]
    failed = next(e.event for e in manager.events(record.id) if tag(e) == "tool.failed")
    assert failed.denied  # type: ignore[attr-defined]
    assert (await manager.status(record.id)).pending_approvals == ()


async def test_a_granted_approval_goes_to_a_person(manager: SessionManager, tmp_path: Path) -> None:
    record = await manager.create_session(
        SessionSpec(
            adapter_id="guarded",
            cwd=str(tmp_path),
            intent=Intent.WORK,
            allowed_commands=("echo approved",),
        )
    )
    assert record.allowed_commands == ("echo approved",)
    manager.send(record.id, "[approve] run it")
    [asked] = await wait_for(manager, record.id, is_type("approval.requested"))
    await manager.respond_approval(record.id, asked.event.request_id, ApprovalDecision.ALLOW)  # type: ignore[attr-defined]
    await wait_for(manager, record.id, is_type("tool.completed"))


async def test_an_unenforceable_intent_is_refused_before_anything_is_stored(
    manager: SessionManager, tmp_path: Path
) -> None:
    with pytest.raises(IntentRefused):
        await manager.create_session(
            SessionSpec(adapter_id="scripted", cwd=str(tmp_path), intent=Intent.REVIEW)
        )
    assert manager.list_sessions() == []


async def test_a_prompt_cannot_change_the_intent_and_its_model_is_applied(
    manager: SessionManager, tmp_path: Path
) -> None:
    record = await manager.create_session(
        SessionSpec(adapter_id="guarded", cwd=str(tmp_path), intent=Intent.ASK, model="m1")
    )
    with pytest.raises(ConfigError, match="cannot change the session's intent"):
        manager.send(record.id, "hi", launch={"intent": "full"})
    with pytest.raises(ConfigError, match="unknown launch policy"):
        manager.send(record.id, "hi", launch={"permission_mode": "yolo"})
    manager.send(record.id, "hi", launch={"intent": "ask"})  # repeating it is fine
    await wait_for(manager, record.id, is_type("turn.completed"))


async def test_the_api_shows_enforceable_intents_and_refuses_with_422(tmp_path: Path) -> None:
    from corral.server import Settings, create_app

    app = create_app(Settings(db_path=tmp_path / "s.db", token="t"))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        headers = {"Authorization": "Bearer t", "Content-Type": "application/json"}
        async with httpx.AsyncClient(
            transport=transport, base_url="http://127.0.0.1", headers=headers, timeout=WAIT
        ) as client:
            shown = (await client.get("/api/adapters/claude-code")).json()
            assert shown["enforceable_intents"] == ["act-pr", "ask", "full", "review", "work"]
            assert "effort" in shown["launch_options"]
            pi = (await client.get("/api/adapters/pi")).json()
            assert pi["enforceable_intents"] == ["full"] and pi["intent_refusals"]["ask"]
            refused = await client.post(
                "/api/sessions",
                json={"adapter_id": "pi", "intent": "ask", "cwd": str(tmp_path), "start": False},
            )
            assert refused.status_code == 422
            assert refused.json()["code"] == "intent_refused"
            assert refused.json()["detail"] == {
                "adapter_id": "pi",
                "intent": "ask",
                "reason": pi["intent_refusals"]["ask"],
            }
            unsupported = await client.post(
                "/api/sessions",
                json={
                    "adapter_id": "gemini",
                    "effort": "high",
                    "cwd": str(tmp_path),
                    "start": False,
                },
            )
            assert unsupported.status_code == 422 and "'effort'" in unsupported.json()["error"]
