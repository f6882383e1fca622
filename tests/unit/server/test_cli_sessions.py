"""``corral sessions …`` against a real service (uvicorn in a thread), with the scripted adapter."""

from __future__ import annotations

import base64
import json
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from typer.testing import CliRunner

from corral._paths import ensure_token
from corral.cli import build_app
from corral.cli._common import run_guarded
from corral.cli.sessions import call
from corral.errors import ApiError

from .conftest import make_app


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    # the CLI finds the token where `corral serve` keeps it: the token file in the corral home
    monkeypatch.delenv("CORRAL_TOKEN", raising=False)
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path / "home"))
    app = make_app(tmp_path, token=ensure_token())
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)  # listening before the thread starts: clients can connect at once
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def run(url: str, *args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(
        build_app(), ["sessions", *args, "--url", url], catch_exceptions=False
    )
    assert result.exit_code == code, result.output
    return result.stdout


def run_json(url: str, *args: str) -> Any:
    return json.loads(run(url, *args, "--json"))


def tail_json(url: str, sid: str, *args: str) -> list[dict[str, Any]]:
    out = run(url, "tail", sid, *args, "--json")
    return [json.loads(line) for line in out.splitlines()]


def test_sessions_cli_round_trip(service: str) -> None:
    url = service
    s = run_json(url, "new", "scripted", "--model", "m")
    sid = s["id"]
    assert s["intent"] is None
    assert [x["id"] for x in run_json(url, "list")] == [sid]

    first = run_json(url, "send", sid, "[hang] x")
    tail_json(url, sid, "--until", "prompt.delivered")
    second = run_json(url, "send", sid, "second")
    assert second["state"] == "queued"
    edited = run_json(url, "edit", second["id"], "second, edited", "--version", "1")
    assert edited["version"] == 2
    third = run_json(url, "send", sid, "third")
    assert run_json(url, "cancel", third["id"])["state"] == "canceled"
    assert [p["state"] for p in run_json(url, "queue", sid)] == ["delivered", "queued", "canceled"]
    status = run_json(url, "status", sid)
    assert status["busy"] is True
    assert status["queue"]["queued"] == 1

    run_json(url, "stop", sid)
    events = tail_json(url, sid, "--until", "turn.completed")
    cancelled = events[-1]
    assert cancelled["event"]["stop_reason"] == "cancelled"
    after = tail_json(url, sid, "--after", str(cancelled["seq"]), "--until", "turn.completed")
    texts = [e["event"]["text"] for e in after if e["event"]["type"] == "text.complete"]
    assert texts == ["echo: second, edited"]
    seqs = [e["seq"] for e in after]
    assert seqs == sorted(seqs)
    assert seqs[0] > cancelled["seq"]

    human = run(url, "show", sid)
    assert "echo: second, edited" in human
    shown = run_json(url, "show", sid)
    assert shown["session"]["id"] == sid
    assert shown["events"][-1]["seq"] == run_json(url, "status", sid)["session"]["last_seq"]
    assert run_json(url, "kill", sid)["state"] == "ended"
    assert first["text"] == "[hang] x"


def test_errors_and_exit_codes(service: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def exit_code(*args: str) -> int:
        # through run_guarded, as the `corral` entry point does: errors become exit codes
        monkeypatch.setattr(sys, "argv", ["corral", "sessions", *args])
        return run_guarded(build_app())

    assert exit_code("show", "missing", "--url", service) == 4
    # the scripted agent enforces no intent: refused (exit 5), nothing stored
    assert exit_code("new", "scripted", "--intent", "review", "--url", service) == 5
    assert exit_code("new", "scripted", "--intent", "sloppy", "--url", service) == 1
    assert exit_code("retry", "missing-prompt", "--url", service) == 4
    assert exit_code("list", "--url", "http://127.0.0.1:9") == 1  # nothing listens there


def test_images_are_uploaded_as_bytes(service: str, tmp_path: Path) -> None:
    # an image outside the session's project: the CLI uploads its bytes, it sends no path
    project = tmp_path / "project"
    project.mkdir()
    image = tmp_path / "shot.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\nfake")
    sid = run_json(service, "new", "scripted", "--cwd", str(project))["id"]
    prompt = run_json(service, "send", sid, "look", "--image", str(image))
    [att] = prompt["attachments"]
    assert att["path"] is None
    assert att["media_type"] == "image/png"
    assert att["name"] == "shot.png"
    assert base64.b64decode(att["data"]) == image.read_bytes()


def test_without_the_token_the_cli_says_how_to_get_it(
    service: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path / "another-home"))
    monkeypatch.setattr(sys, "argv", ["corral", "sessions", "list", "--url", service])
    assert run_guarded(build_app()) == 1
    monkeypatch.setenv("CORRAL_TOKEN", "wrong")
    with pytest.raises(ApiError) as info:
        call(service, "GET", "/api/sessions")
    assert info.value.status == 401
    assert "CORRAL_TOKEN" in str(info.value)
