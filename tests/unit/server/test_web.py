"""The web app's server side: the static shell, /api/adapters, /api/overview, the demo resolver."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from corral.adapters.claude import ClaudeAdapter
from corral.errors import AdapterNotFoundError
from corral.server._demo import DEMO_PREFIX, DemoProvider, demo_resolver
from corral.server._overview_api import Totals, advance
from corral.sessions import AdapterResolver

from .conftest import manager_of, wait_prompt_state


async def test_index_and_static_files_carry_a_strict_csp(client: httpx.AsyncClient) -> None:
    page = await client.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="/static/app.js">' in page.text
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp
    for name, kind in (("app.js", "text/javascript"), ("md.js", "text/javascript")):
        r = await client.get(f"/static/{name}")
        assert r.status_code == 200 and r.headers["content-type"].startswith(kind)
        assert r.headers["x-content-type-options"] == "nosniff"
    css = await client.get("/static/app.css")
    assert css.headers["content-type"].startswith("text/css")


@pytest.mark.parametrize(
    "name", ["../_app.py", "..%2F_app.py", "_web.py", "index.html", "nope.js", "a/b.js"]
)
async def test_static_serves_only_the_shipped_assets(client: httpx.AsyncClient, name: str) -> None:
    r = await client.get(f"/static/{name}")
    assert r.status_code == 404
    assert "import" not in r.text


def test_page_never_puts_text_into_innerhtml() -> None:
    web = Path(__file__).resolve().parents[3] / "src" / "corral" / "server" / "web"
    scripts = sorted(web.glob("*.js"))
    assert {p.name for p in scripts} >= {"app.js", "md.js", "transcript.js", "session.js"}
    for path in scripts:
        text = path.read_text()
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
            assert sink not in text, f"{path.name} uses {sink}"


async def test_adapters_lists_builtins_with_capabilities_and_repair(
    client: httpx.AsyncClient,
) -> None:
    rows = (await client.get("/api/adapters")).json()
    by_id = {r["id"]: r for r in rows}
    claude = by_id["claude-code"]
    assert claude["display_name"] == "Claude Code"
    assert claude["capabilities"]["image_input"] is True
    assert claude["logged_in"] is None  # corral does not read credentials
    assert claude["pinned_version"]
    assert claude["repair"] == ["corral", "agents", "install", "claude"]
    for row in rows:
        if row["demo"]:
            assert row["id"].startswith(DEMO_PREFIX) and row["logged_in"] is True
            assert row["id"].removeprefix(DEMO_PREFIX) in by_id


async def test_overview_counts_turns_attention_and_usage(client: httpx.AsyncClient) -> None:
    sid = (await client.post("/api/sessions", json={"adapter_id": "scripted"})).json()["id"]
    prompt = (await client.post(f"/api/sessions/{sid}/prompts", json={"text": "hi"})).json()
    await wait_prompt_state(client, sid, prompt["id"], "delivered")

    async def finished() -> dict[str, object]:
        while True:
            rows = (await client.get("/api/overview")).json()
            row: dict[str, object] = next(r for r in rows if r["session"]["id"] == sid)
            if row["turns"]:
                return row
            await asyncio.sleep(0.05)

    row = await asyncio.wait_for(finished(), 10)
    assert row["attention"] == "finished"
    assert row["last_turn"] == "end_turn"
    assert row["pending_approvals"] == 0
    assert isinstance(row["last_turn_seq"], int)
    assert row["last_turn_seq"] <= manager_of(client).store.last_seq(sid)


def test_advance_tracks_pending_cards_until_resolved_or_turn_end() -> None:
    from datetime import UTC, datetime

    from corral.events import (
        ApprovalDecision,
        ApprovalRequested,
        ApprovalResolved,
        Envelope,
        QuestionAsked,
        TurnCompleted,
        Usage,
    )
    from corral.events._model import Question

    events = [
        ApprovalRequested(request_id="a1", tool_name="Write"),
        ApprovalRequested(request_id="a2", tool_name="Bash"),
        ApprovalResolved(request_id="a1", decision=ApprovalDecision.ALLOW),
        QuestionAsked(request_id="q1", questions=(Question(question="?"),)),
        Usage(input_tokens=3, output_tokens=2, cost_usd=0.5),
    ]
    now = datetime.now(UTC)
    envs = [
        Envelope(session_id="s", seq=i + 1, ts=now, source="x", event=e)
        for i, e in enumerate(events)
    ]
    totals = Totals()
    advance(totals, envs)
    assert totals.approvals == ["a2"] and totals.questions == ["q1"]
    assert (totals.input_tokens, totals.output_tokens, totals.cost_usd) == (3, 2, 0.5)
    advance(totals, envs)  # already seen: ignored
    assert totals.input_tokens == 3
    end = Envelope(session_id="s", seq=6, ts=now, source="x", event=TurnCompleted())
    advance(totals, [end])
    assert totals.approvals == [] and totals.questions == [] and totals.turns == 1
    assert totals.last_turn == "end_turn" and totals.last_turn_seq == 6


def test_demo_resolver_wraps_only_demo_ids(tmp_path: Path) -> None:
    provider = DemoProvider(tmp_path)
    base = AdapterResolver({}, use_env=False, use_entry_points=False)
    resolve = demo_resolver(base, provider)
    assert resolve("claude-code") is ClaudeAdapter
    demo = resolve("demo.claude-code")
    assert issubclass(demo, ClaudeAdapter) and demo is not ClaudeAdapter
    assert demo.agent_id == "demo.claude-code"
    assert resolve("demo.claude-code") is demo  # one class per adapter
    with pytest.raises(AdapterNotFoundError):
        resolve("demo.pi")
    assert not provider.running  # resolving starts nothing; constructing does


async def test_models_say_why_when_an_adapter_cannot_list_them(client: httpx.AsyncClient) -> None:
    r = await client.get("/api/adapters/scripted/models")
    assert r.status_code == 200
    body = r.json()
    assert body["live"] is False and body["models"] == []
    assert "does not report its models" in body["reason"]
    assert (await client.get("/api/adapters/no-such-adapter/models")).status_code == 404


def test_project_files_stay_inside_the_project(tmp_path: Path) -> None:
    from corral.server._files_api import project_files

    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("x")
    (root / "README.md").write_text("x")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("x")
    outside = tmp_path / "secret.txt"
    outside.write_text("x")
    (root / "link.txt").symlink_to(outside)  # a symlink out of the project
    (root / "escape").symlink_to(tmp_path, target_is_directory=True)
    found = project_files(str(root), "")
    assert found.files == ["README.md", "src/app.py"]
    assert project_files(str(root), "APP").files == ["src/app.py"]
    assert project_files(str(root), "../secret").files == []


async def test_files_endpoint_answers_for_the_session_cwd(
    client: httpx.AsyncClient, tmp_path: Path
) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "main.py").write_text("x")
    body = {"adapter_id": "scripted", "cwd": str(project), "start": False}
    sid = (await client.post("/api/sessions", json=body)).json()["id"]
    r = await client.get(f"/api/sessions/{sid}/files", params={"q": "mai"})
    assert r.status_code == 200 and r.json()["files"] == ["main.py"]
    nocwd = await client.post("/api/sessions", json={"adapter_id": "scripted", "start": False})
    r = await client.get(f"/api/sessions/{nocwd.json()['id']}/files")
    assert r.json() == {"root": None, "files": [], "truncated": False}
