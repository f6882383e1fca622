"""Profiles (an adapter's defaults, kept in corral's home), the one launch gate every launch path
passes (a stale adapter re-verifies first, or the launch is refused), and efforts as the adapter
lists them per model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

from corral.adapters._model_info import ModelInfo
from corral.cli import build_app
from corral.cli.chat import Chat
from corral.errors import AdapterUnverified
from corral.intents import Intent, unguarded
from corral.registry import Registry, last_verify, launch_gate, load_profile, record_verify, verify
from corral.server import Settings, create_app
from corral.sessions import AdapterResolver, SessionManager, SessionSpec
from corral.testing.scripted_adapter import ScriptedAdapter

from .conftest import TOKEN, client_for
from .test_settings_page_api import _state, _write_manifest


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "corral-home"
    home.mkdir()
    monkeypatch.setenv("CORRAL_HOME", str(home))
    monkeypatch.delenv("CORRAL_EXT_ADAPTERS_DIR", raising=False)
    return home


class Catty(ScriptedAdapter):
    """Launches like the scripted agent; its id is that of the ``catty`` manifest in the home."""

    agent_id = "catty"
    enforceable_intents = frozenset({Intent.FULL})
    intent_renderer = unguarded.render


class Efforts(ScriptedAdapter):
    """Lists two models: one with efforts, one that takes none."""

    agent_id = "efforts"
    provides_models = True
    listed: ClassVar[list[ModelInfo]] = [
        ModelInfo(id="m1", efforts=("low", "max"), default_effort="low"),
        ModelInfo(id="m2", efforts=()),
    ]

    async def list_models(self) -> list[str]:
        return [m.id for m in self.listed]

    async def describe_models(self) -> list[ModelInfo]:
        return list(self.listed)


class NoEffort(ScriptedAdapter):
    agent_id = "no-effort"
    supported_options = frozenset({"cwd", "model", "resume_session_id", "on_session_id"})


def _resolver() -> AdapterResolver:
    adapters: dict[str, Any] = {
        "scripted": ScriptedAdapter.configured(),
        "catty": Catty,
        "efforts": Efforts,
        "no-effort": NoEffort,
    }
    return AdapterResolver(adapters, use_env=False, use_entry_points=False)


def _app(tmp_path: Path) -> Any:
    return create_app(Settings(db_path=tmp_path / "corral.db", token=TOKEN), resolver=_resolver())


async def test_a_profile_fills_what_a_new_session_leaves_out(tmp_path: Path, home: Path) -> None:
    async with client_for(_app(tmp_path)) as client:
        r = await client.put(
            "/api/settings/adapters/catty/defaults",
            json={"model": "m-profile", "effort": "high", "intent": "full"},
        )
        assert r.status_code == 200, r.text
        # kept in corral's home, not in a manifest and not in the service's settings file
        stored = json.loads((home / "state" / "profiles.json").read_text())
        assert stored["catty"] == {"model": "m-profile", "effort": "high", "intent": "full"}
        assert not (home / "adapters" / "catty.json").exists()
        assert load_profile("catty").intent is Intent.FULL

        r = await client.post("/api/sessions", json={"adapter_id": "catty", "start": False})
        assert r.status_code == 201, r.text
        record = r.json()
        assert (record["model"], record["effort"], record["intent"]) == (
            "m-profile",
            "high",
            "full",
        )
        # explicit values win; an explicit null is the adapter's own default, not the profile
        body = {"adapter_id": "catty", "start": False, "model": "m-own", "effort": None}
        record = (await client.post("/api/sessions", json={**body, "intent": None})).json()
        assert (record["model"], record["effort"], record["intent"]) == ("m-own", None, None)


async def test_the_old_settings_file_defaults_move_into_the_profiles(
    tmp_path: Path, home: Path
) -> None:
    legacy = {"adapter_defaults": {"scripted": {"model": "old", "effort": "low"}}}
    (tmp_path / "settings.json").write_text(json.dumps(legacy))
    async with client_for(_app(tmp_path)) as client:
        view = (await client.get("/api/settings")).json()
    assert view["adapter_defaults"]["scripted"] == {"model": "old", "effort": "low", "intent": None}
    assert "adapter_defaults" not in json.loads((tmp_path / "settings.json").read_text()) or (
        json.loads((tmp_path / "settings.json").read_text())["adapter_defaults"] == {}
    )


async def test_changing_a_profile_marks_it_stale_and_the_next_launch_reverifies(
    tmp_path: Path, home: Path
) -> None:
    _write_manifest(home, "cat")
    async with client_for(_app(tmp_path)) as client:
        assert (await client.post("/api/settings/adapters/catty/verify")).json()["ok"] is True
        r = await client.put("/api/settings/adapters/catty/defaults", json={"model": "m1"})
        assert _state(r.json(), "catty")["stale"] is True  # the profile changed
        r = await client.post("/api/sessions", json={"adapter_id": "catty"})
        assert r.status_code == 201, r.text  # re-verified (cat still runs), then launched
        assert r.json()["model"] == "m1" and r.json()["state"] == "idle"
        assert _state((await client.get("/api/settings")).json(), "catty")["stale"] is False
        await client.post(f"/api/sessions/{r.json()['id']}/kill")


async def test_every_api_launch_path_passes_the_gate(tmp_path: Path, home: Path) -> None:
    _write_manifest(home, "cat")
    async with client_for(_app(tmp_path)) as client:
        assert (await client.post("/api/settings/adapters/catty/verify")).json()["ok"] is True
        created = (
            await client.post("/api/sessions", json={"adapter_id": "catty", "start": False})
        ).json()
        running = (await client.post("/api/sessions", json={"adapter_id": "catty"})).json()
        assert running["state"] == "idle"
    _write_manifest(home, "false")  # changed while the service was down; it no longer verifies
    async with client_for(_app(tmp_path)) as client:
        assert (await client.get(f"/api/sessions/{running['id']}")).json()["session"][
            "state"
        ] == "disconnected"
        for path in (
            f"/api/sessions/{created['id']}/start",
            f"/api/sessions/{running['id']}/resume",
        ):
            r = await client.post(path)
            assert r.status_code == 409, (path, r.text)
            assert r.json()["type"] == "adapter_unverified"
            assert r.json()["detail"]["adapter_id"] == "catty"
        before = len((await client.get("/api/sessions")).json())
        r = await client.post("/api/sessions", json={"adapter_id": "catty"})
        assert r.status_code == 409 and r.json()["type"] == "adapter_unverified"
        assert len((await client.get("/api/sessions")).json()) == before  # nothing stored
        states = {s["id"]: s["state"] for s in (await client.get("/api/sessions")).json()}
        assert states[created["id"]] == "created" and states[running["id"]] == "disconnected"

        _write_manifest(home, "cat -u")  # changed again, and this one verifies: resume goes on
        r = await client.post(f"/api/sessions/{running['id']}/resume")
        assert r.status_code == 200, r.text
        assert r.json()["state"] == "idle"
        await client.post(f"/api/sessions/{running['id']}/kill")


async def test_corral_chat_and_the_manager_pass_the_gate(tmp_path: Path, home: Path) -> None:
    _write_manifest(home, "cat")
    record = await launch_gate("catty")
    assert record is None  # never verified: no gate
    async with SessionManager(tmp_path / "c.db", resolver=_resolver()) as mgr:
        spec = SessionSpec(adapter_id="catty")
        sid = (await mgr.create_session(spec, start=False)).id
        manifest = Registry().manifest("catty")
        record_verify(manifest, await verify(manifest), home=home)
        _write_manifest(home, "false")
        with pytest.raises(AdapterUnverified) as caught:
            await Chat(tmp_path / "c.db", spec, sid)._open(mgr)  # corral chat --session
        assert caught.value.adapter_id == "catty"
        with pytest.raises(AdapterUnverified):
            await Chat(tmp_path / "c.db", spec, None)._open(mgr)  # corral chat (a new session)
        assert [s.id for s in mgr.list_sessions()] == [sid]
        assert mgr.get_session(sid).state == "created"


def test_corral_run_passes_the_gate(tmp_path: Path, home: Path) -> None:
    _write_manifest(home, "cat")
    manifest = Registry().manifest("catty")
    assert asyncio.run(launch_gate("catty")) is None  # never verified: no gate
    assert record_verify(manifest, asyncio.run(verify(manifest)), home=home).ok
    _write_manifest(home, "false")
    result = CliRunner().invoke(build_app(), ["run", "catty", "hello"])
    # refused before anything ran (the CLI's guard turns it into exit code 1 and the message)
    assert isinstance(result.exception, AdapterUnverified), result.output
    assert result.exception.adapter_id == "catty" and result.exception.exit_code == 1
    record = last_verify("catty")
    assert record is not None and not record.ok  # it re-verified, and that failed


def test_corral_job_passes_the_gate(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_manifest(home, "cat")
    manifest = Registry().manifest("catty")
    assert record_verify(manifest, asyncio.run(verify(manifest)), home=home).ok
    _write_manifest(home, "false")  # the profile changed: stale, and re-verifying it fails
    monkeypatch.setenv("AGENT_PROMPT", "hello")
    monkeypatch.setenv("AGENT_MODE", "work")
    monkeypatch.setenv("AGENT_CWD", str(tmp_path))
    result = CliRunner().invoke(build_app(), ["job", "run", "catty", "--json"])
    # refused before any agent ran, as `corral run` is (exit 1, the agent-failure code of a job)
    assert isinstance(result.exception, AdapterUnverified), result.output
    assert result.exception.exit_code == 1
    record = last_verify("catty")
    assert record is not None and not record.ok  # it re-verified, and that failed


async def test_efforts_are_listed_per_model_and_checked(tmp_path: Path, home: Path) -> None:
    async with client_for(_app(tmp_path)) as client:
        listed = (await client.get("/api/adapters/efforts/models")).json()
        assert listed["live"] is True and listed["models"] == ["m1", "m2"]
        assert listed["entries"][0] == {
            "id": "m1",
            "name": None,
            "efforts": ["low", "max"],
            "default_effort": "low",
        }
        assert listed["entries"][1]["efforts"] == []
        assert listed["takes_effort"] is True and listed["efforts_reason"] is None

        url = "/api/settings/adapters/efforts/defaults"
        assert (await client.put(url, json={"model": "m1", "effort": "max"})).status_code == 200
        r = await client.put(url, json={"model": "m1", "effort": "high"})
        assert r.status_code == 422 and "lists no effort 'high' for m1" in r.json()["error"]
        r = await client.put(url, json={"model": "m2", "effort": "low"})
        assert r.status_code == 422 and "(it takes none)" in r.json()["error"]
        r = await client.post(
            "/api/sessions", json={"adapter_id": "efforts", "model": "m1", "effort": "high"}
        )
        assert r.status_code == 422 and r.json()["detail"]["field"] == "effort"
        # a model the list does not know: the agent decides
        r = await client.post(
            "/api/sessions",
            json={"adapter_id": "efforts", "model": "m9", "effort": "high", "start": False},
        )
        assert r.status_code == 201, r.text

        # an adapter without an effort option says so, and an effort for it is refused
        listed = (await client.get("/api/adapters/no-effort/models")).json()
        assert listed["takes_effort"] is False
        assert listed["efforts_reason"] == "Scripted test agent takes no reasoning effort at launch"
        r = await client.put("/api/settings/adapters/no-effort/defaults", json={"effort": "low"})
        assert r.status_code == 422
        # one that takes an effort but lists none says why
        listed = (await client.get("/api/adapters/scripted/models")).json()
        assert (
            listed["takes_effort"] is True
            and "does not list its efforts" in (listed["efforts_reason"])
        )
        r = await client.put("/api/settings/adapters/scripted/defaults", json={"effort": "Hi!"})
        assert r.status_code == 422
