"""Every refusal of docs/security.md, proved against a real ``corral serve`` process over HTTP.

One service (port 0, temp ``CORRAL_HOME``, small limits) serves the whole module; the scripted
adapter and a leaky fake agent (``fake_agents/leaky_agent.py``) are loaded through
``CORRAL_EXTRA_ADAPTERS``, as any drop-in adapter would be.
"""

from __future__ import annotations

import base64
import json
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ._serve import Served, serve_process

FAKE_AGENTS = Path(__file__).parent / "fake_agents"
SECRET = "leaky-value-9f8e7d6c5b4a"  # no known key shape: only the env-variable rule catches it
MAX_BODY = 128 * 1024
MAX_TEXT = 16 * 1024
MAX_ATTACHMENT = 32 * 1024
JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("security")
    env = {
        "CORRAL_EXTRA_ADAPTERS": (
            "corral.testing.scripted_adapter:ScriptedAdapter,leaky_agent:LeakyAgent"
        ),
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(FAKE_AGENTS), os.environ.get("PYTHONPATH")])
        ),
        "LEAKY_TEST_SECRET": SECRET,
        "CORRAL_ALLOWED_HOSTS": "corral.lan",
        "CORRAL_MAX_BODY_BYTES": str(MAX_BODY),
        "CORRAL_MAX_TEXT_BYTES": str(MAX_TEXT),
        "CORRAL_MAX_ATTACHMENT_BYTES": str(MAX_ATTACHMENT),
    }
    with serve_process(root / "home", env=env) as s:
        yield s


@pytest.fixture
def api(served: Served) -> Iterator[httpx.Client]:
    with served.client(headers=JSON) as client:
        yield client


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "notes.txt").write_text("inside the project")
    (tmp_path / "outside.txt").write_text("not for the agent")
    return tmp_path / "project"


def session(api: httpx.Client, cwd: Path, adapter: str = "scripted", **extra: Any) -> str:
    r = api.post("/api/sessions", json={"adapter_id": adapter, "cwd": str(cwd), **extra})
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def count_sessions(api: httpx.Client) -> int:
    return len(api.get("/api/sessions").json())


# ── cross-site requests ──
def test_simple_cross_site_post_is_refused(served: Served, api: httpx.Client) -> None:
    before = count_sessions(api)
    body = json.dumps({"adapter_id": "scripted", "start": False})
    # what any web page can send without a preflight: text/plain, a foreign Origin, no token
    page = {"Content-Type": "text/plain", "Origin": "http://evil.example"}
    r = httpx.post(f"{served.url}/api/sessions", content=body, headers=page, timeout=10)
    assert r.status_code == 403
    assert r.json()["type"] == "forbidden_origin"
    # even with the token and no Origin, a non-JSON mutation is refused
    for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data"):
        r = api.post("/api/sessions", content=body, headers={"Content-Type": kind})
        assert r.status_code == 415, kind
    r = httpx.post(
        f"{served.url}/api/sessions",
        content=body,
        headers={"Authorization": f"Bearer {served.token}"},
        timeout=10,
    )
    assert r.status_code == 415  # no Content-Type at all
    assert count_sessions(api) == before


def test_foreign_host_is_refused(served: Served, api: httpx.Client) -> None:
    port = served.url.rsplit(":", 1)[1]
    for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.evil.example", ""):
        for path in ("/api/sessions", "/api/health", "/"):
            r = api.get(path, headers={"Host": host})
            assert r.status_code == 403, (host, path)
            assert r.json()["type"] == "forbidden_host"
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "corral.lan"):
        assert api.get("/api/sessions", headers={"Host": host}).status_code == 200, host


def test_foreign_origin_is_refused(served: Served, api: httpx.Client) -> None:
    port = served.url.rsplit(":", 1)[1]
    for origin in (
        "http://evil.example",
        "null",
        f"http://localhost:{port}",
        f"https://127.0.0.1:{port}",
    ):
        r = api.get("/api/sessions", headers={"Origin": origin})
        assert r.status_code == 403, origin
        r = api.post("/api/sessions", json={"adapter_id": "scripted"}, headers={"Origin": origin})
        assert r.status_code == 403, origin
    own = api.get("/api/sessions", headers={"Origin": served.url})
    assert own.status_code == 200
    assert own.headers["x-frame-options"] == "DENY"  # never framed by another site
    assert own.headers["x-content-type-options"] == "nosniff"


def test_no_token_no_access_on_loopback(served: Served, api: httpx.Client) -> None:
    sid = api.post("/api/sessions", json={"adapter_id": "scripted", "start": False}).json()["id"]
    reads = ["/api/sessions", f"/api/sessions/{sid}", f"/api/sessions/{sid}/events",
             f"/api/sessions/{sid}/stream?follow=false", f"/api/sessions/{sid}/view",
             "/api/openapi.json"]  # fmt: skip
    mutations = ["/api/sessions", f"/api/sessions/{sid}/prompts", f"/api/sessions/{sid}/kill",
                 "/api/auth/codes"]  # fmt: skip
    for credentials in ({}, {"Authorization": "Bearer wrong"}, {"Cookie": "corral_auth=wrong"}):
        with httpx.Client(base_url=served.url, headers=credentials, timeout=10) as anon:
            for path in reads:
                assert anon.get(path).status_code == 401, (credentials, path)
            for path in mutations:
                r = anon.post(path, json={"text": "x", "adapter_id": "scripted"})
                assert r.status_code == 401, (credentials, path)
            assert anon.get("/api/health").status_code == 200  # open: no data
            assert anon.get("/").status_code == 200  # the page shell: no data
    assert api.get(f"/api/sessions/{sid}").json()["prompts"] == []  # nothing got through


# ── the login flow ──
def test_login_code_sets_the_cookie_once(served: Served, api: httpx.Client) -> None:
    r = api.post("/api/auth/codes")
    assert r.status_code == 200
    issued = r.json()
    assert issued["url"] == f"{served.url}/auth/login?code={issued['code']}"
    for url in (served.login_url, issued["url"]):
        with httpx.Client(timeout=10) as browser:
            r = browser.get(url)
            assert r.status_code == 303
            assert r.headers["location"] == "/"
            cookie = r.headers["set-cookie"].lower()
            assert "httponly" in cookie
            assert "samesite=strict" in cookie
            assert "path=/" in cookie
            assert browser.cookies.get("corral_auth") == served.token
            assert browser.get(f"{served.url}/api/sessions").status_code == 200
            browser.cookies.clear()
            reused = browser.get(url)
            assert reused.status_code == 403
            assert reused.json()["type"] == "invalid_login_code"
            assert "corral_auth" not in browser.cookies
    for bad in ("", "?code=", "?code=made-up"):
        assert httpx.get(f"{served.url}/auth/login{bad}", timeout=10).status_code == 403


# ── paths ──
def test_bad_cwd_is_refused(api: httpx.Client, project: Path) -> None:
    before = count_sessions(api)
    for cwd in ("relative/dir", str(project / "missing"), str(project / "notes.txt"), "/", ""):
        r = api.post("/api/sessions", json={"adapter_id": "scripted", "cwd": cwd})
        assert r.status_code == 422, cwd
        assert r.json()["type"] == "invalid_cwd"
        assert repr(cwd) in r.json()["error"] or cwd == "/"
    assert count_sessions(api) == before
    session(api, project)  # an existing absolute directory is fine


def test_attachments_outside_the_project_are_refused(
    api: httpx.Client, project: Path, tmp_path: Path
) -> None:
    sid = session(api, project, start=False)
    (project / "escape").symlink_to(tmp_path / "outside.txt")
    (project / "dir-escape").symlink_to(tmp_path)
    refused = ["/etc/passwd", "../outside.txt", str(tmp_path / "outside.txt"), "escape",
               "dir-escape/outside.txt", str(project / ".." / "outside.txt"), "missing.txt",
               "."]  # fmt: skip
    for path in refused:
        att = {"path": path, "media_type": "text/plain"}
        r = api.post(f"/api/sessions/{sid}/prompts", json={"text": "x", "attachments": [att]})
        assert r.status_code == 422, path
        assert r.json()["type"] in ("path_outside_project", "path_not_a_file"), path
        r = api.put(f"/api/sessions/{sid}/view", json={"draft_attachments": [att]})
        assert r.status_code == 422, path
    assert api.get(f"/api/sessions/{sid}/prompts").json() == []

    inside = {"path": "notes.txt", "media_type": "text/plain"}
    r = api.post(f"/api/sessions/{sid}/prompts", json={"text": "x", "attachments": [inside]})
    assert r.status_code == 201, r.text
    assert r.json()["attachments"][0]["path"] == str((project / "notes.txt").resolve())
    upload = {"data": base64.b64encode(b"\x89PNG...").decode(), "media_type": "image/png"}
    r = api.post(f"/api/sessions/{sid}/prompts", json={"text": "y", "attachments": [upload]})
    assert r.status_code == 201, r.text


# ── sizes ──
def test_oversized_body_is_413(served: Served, api: httpx.Client) -> None:
    sid = session(api, Path("/tmp"), start=False)
    big = json.dumps({"text": "x" * (MAX_BODY + 10)}).encode()
    r = api.post(f"/api/sessions/{sid}/prompts", content=big)
    assert r.status_code == 413
    assert r.json()["type"] == "payload_too_large"

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it streams
        yield b'{"text": "'
        for _ in range(MAX_BODY // 4096 + 2):
            yield b"y" * 4096
        yield b'"}'

    r = api.post(f"/api/sessions/{sid}/prompts", content=chunks())
    assert r.status_code == 413
    assert r.json()["type"] == "payload_too_large"  # cut off while streaming, not a field check
    assert api.get(f"/api/sessions/{sid}/prompts").json() == []
    assert api.get("/api/health").status_code == 200  # and the service is fine


def test_oversized_field_is_413(api: httpx.Client) -> None:
    sid = session(api, Path("/tmp"), start=False)
    r = api.post(f"/api/sessions/{sid}/prompts", json={"text": "z" * (MAX_TEXT + 1)})
    assert r.status_code == 413
    assert r.json()["detail"]["field"] == "text"
    r = api.post(f"/api/sessions/{sid}/prompts", json={"text": "é" * (MAX_TEXT // 2 + 1)})
    assert r.status_code == 413  # counted in UTF-8 bytes
    data = base64.b64encode(b"\0" * (MAX_ATTACHMENT + 1)).decode()
    att = {"data": data, "media_type": "image/png"}
    r = api.post(f"/api/sessions/{sid}/prompts", json={"text": "a", "attachments": [att]})
    assert r.status_code == 413
    assert r.json()["detail"]["field"] == "attachments[0].data"
    r = api.put(f"/api/sessions/{sid}/view", json={"draft_text": "d" * (MAX_TEXT + 1)})
    assert r.status_code == 413
    r = api.post("/api/sessions", json={"adapter_id": "s" * (MAX_TEXT + 1)})
    assert r.status_code == 413
    assert api.get(f"/api/sessions/{sid}/prompts").json() == []
    for depth in (100, 50_000):  # deeper than the walk allows; deeper than the decoder allows
        deep = b'{"text": "t", "launch": {"a": ' + b"[" * depth + b"]" * depth + b"}}"
        r = api.post(f"/api/sessions/{sid}/prompts", content=deep)
        assert r.status_code == 422, depth  # refused, not a 500
        assert "nested too deeply" in r.json()["error"]
    assert api.get(f"/api/sessions/{sid}/prompts").json() == []
    ok = api.post(f"/api/sessions/{sid}/prompts", json={"text": "z" * MAX_TEXT})
    assert ok.status_code == 201


# ── files ──
def test_home_database_and_token_are_private(served: Served, api: httpx.Client) -> None:
    session(api, Path("/tmp"), start=False)  # the database has been written to

    def mode(path: Path) -> int:
        return stat.S_IMODE(path.stat().st_mode)

    assert mode(served.home) == 0o700
    assert mode(served.home / "token") == 0o600
    db = served.home / "corral.db"
    assert mode(db) == 0o600
    sides = [p for p in (Path(f"{db}-wal"), Path(f"{db}-shm")) if p.exists()]
    assert sides, "WAL mode: side files exist while the service runs"
    for side in sides:
        assert mode(side) == 0o600, side


# ── secrets ──
def wait_failed(api: httpx.Client, sid: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while (s := api.get(f"/api/sessions/{sid}").json()["session"])["state"] != "failed":
        assert time.monotonic() < deadline, "the leaky agent's session never failed"
        time.sleep(0.1)
    return dict(s)


def test_agent_stderr_secrets_are_redacted(
    served: Served, api: httpx.Client, project: Path
) -> None:
    sid = session(api, project, adapter="leaky")
    wait_failed(api, sid)
    raised = session(api, project, adapter="leaky", model="raise")
    record = wait_failed(api, raised)
    assert record["last_error"] == "RuntimeError: driver choked on [REDACTED]"
    events = api.get(f"/api/sessions/{sid}/events").json()
    ended = [e["event"] for e in events if e["event"]["type"] == "session.ended"]
    assert ended, events
    tail = ended[-1]["stderr_tail"]
    assert "auth failed for key [REDACTED]" in tail
    assert "fallback [REDACTED] rejected" in tail
    assert "Bearer [REDACTED]" in tail
    raised_events = api.get(f"/api/sessions/{raised}/events").json()
    assert "driver choked on [REDACTED]" in json.dumps(raised_events)
    shown = json.dumps([events, raised_events, api.get("/api/sessions").json()])
    for leaked in (SECRET, "sk-ant-api03-A1b2", "tok3ntok3n"):
        assert leaked not in shown
        for f in served.home.glob("corral.db*"):  # nor in what is stored
            assert leaked.encode() not in f.read_bytes(), f
