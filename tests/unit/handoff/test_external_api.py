"""``GET /api/external-sessions``: authenticated, filtered, refreshed from the recorded stores."""

from __future__ import annotations

from pathlib import Path

import pytest
from server.conftest import client_for, make_app

from ._recorded import recorded_home

AGENTS = {"claude-code", "codex", "gemini", "qwen", "pi", "opencode", "hermes"}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    env, _ = recorded_home(tmp_path)
    for key, value in env.items():  # the service reads its own process's stores
        monkeypatch.setenv(key, value)
    return env


async def test_lists_refreshes_and_filters(home: dict[str, str], tmp_path: Path) -> None:
    async with client_for(make_app(tmp_path / "svc")) as client:
        first = (await client.get("/api/external-sessions")).json()
        assert {s["agent_id"] for s in first["sessions"]} == AGENTS
        assert first["index"]["read"] == first["index"]["files"] > 0
        again = (await client.get("/api/external-sessions")).json()
        assert again["index"]["read"] == 0
        assert again["sessions"] == first["sessions"]
        quiet = (await client.get("/api/external-sessions", params={"refresh": "false"})).json()
        assert quiet["index"] is None and quiet["sessions"] == first["sessions"]
        (pi,) = (await client.get("/api/external-sessions", params={"agent": "pi"})).json()[
            "sessions"
        ]
        by_cwd = await client.get("/api/external-sessions", params={"cwd": pi["cwd"]})
        assert by_cwd.json()["sessions"] == [pi]
        refused = await client.get("/api/external-sessions", params={"agent": "kilo"})
        assert refused.status_code == 422 and "kilo" in refused.json()["error"]
        relative = await client.get("/api/external-sessions", params={"cwd": "repo"})
        assert relative.status_code == 422


async def test_needs_the_token(home: dict[str, str], tmp_path: Path) -> None:
    async with client_for(make_app(tmp_path / "svc")) as client:
        for headers in ({"Authorization": ""}, {"Authorization": "Bearer wrong"}):
            r = await client.get("/api/external-sessions", headers=headers)
            assert r.status_code == 401
