"""``opencode serve`` lifecycle without OpenCode: launch building, the readiness deadline against a
stand-in server that accepts connections and never answers, readiness against one that boots as
``opencode serve`` does (connections accepted before it is up never answered) or answers late,
stop by PID, the SSE client, attach records, prompt parts."""

from __future__ import annotations

import asyncio
import base64
import os
import re
import sys
import time
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral._process import ServerTransport, _sse
from corral._process._sse import OverlongEvent, SseClient, SseFramer, parse_sse_lines
from corral.adapters._opencode_attach import AttachRecord, find_record, remove_record, write_record
from corral.adapters._opencode_server import USERNAME, ServeLaunch, build_serve_launch, wait_ready
from corral.adapters.base import Attachment
from corral.adapters.opencode import (
    OpenCodeAdapter,
    permission_ruleset,
    prompt_parts,
)
from corral.errors import ConfigError, ServerStartTimeout, SessionError

# Listens on the --port it is given, never accepts: every request hangs, like a stalled server.
SILENT_SERVER = """\
import socket, sys, time
port = int(sys.argv[sys.argv.index("--port") + 1])
s = socket.socket(); s.bind(("127.0.0.1", port)); s.listen(64)
print("listening", flush=True)
time.sleep(600)
"""

# Like opencode serve 1.18.33 while it boots: the port is bound before the server is up, and a
# connection accepted then is never answered. Those connections are logged; after HOLD seconds it
# prints its "listening" line (unless STAND_IN_QUIET is set) and answers the two readiness
# requests, each DELAY seconds late.
BOOTING_SERVER = """\
import os, socket, sys, threading, time
port = int(sys.argv[sys.argv.index("--port") + 1])
log = os.environ["STAND_IN_LOG"]
s = socket.socket(); s.bind(("127.0.0.1", port)); s.listen(64)
up = time.monotonic() + float(os.environ["STAND_IN_HOLD"])
held = []
def answer(conn):
    data = b""
    while b"\\r\\n\\r\\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            return
        data += chunk
    time.sleep(float(os.environ.get("STAND_IN_DELAY", "0")))
    body = b'{"healthy":true,"version":"9.9.9"}' if b"/global/health" in data else b"[]"
    head = b"HTTP/1.1 200 OK\\r\\ncontent-type: application/json\\r\\ncontent-length: %d\\r\\n\\r\\n"
    conn.sendall(head % len(body) + body)
    conn.close()
def say():
    print("opencode server listening on http://127.0.0.1:%d" % port, flush=True)
if not os.environ.get("STAND_IN_QUIET"):
    threading.Timer(max(0.0, up - time.monotonic()), say).start()
while True:
    conn, _ = s.accept()
    if time.monotonic() < up:
        held.append(conn)  # kept open, never read, never answered
        with open(log, "a") as f:
            f.write("held\\n")
        continue
    threading.Thread(target=answer, args=(conn,), daemon=True).start()
"""


def _stand_in(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "opencode"
    script.write_text(f"#!{sys.executable}\n{body}")
    script.chmod(0o755)
    return script


def test_build_serve_launch_is_pure_and_sets_auth() -> None:
    launch = build_serve_launch(
        binary="/x/opencode", port=4242, password="pw", env={"HOME": "/h"}, extra_args=["--pure"]
    )
    assert launch.argv == [
        "/x/opencode",
        "serve",
        "--hostname",
        "127.0.0.1",
        "--port",
        "4242",
        "--pure",
    ]
    assert launch.url == "http://127.0.0.1:4242"
    assert launch.env["OPENCODE_SERVER_PASSWORD"] == "pw"
    assert launch.env["OPENCODE_SERVER_USERNAME"] == "opencode"
    assert launch.env["OPENCODE_ENABLE_QUESTION_TOOL"] == "1"
    assert launch.env["HOME"] == "/h"


async def _started_silent_server(tmp_path: Path) -> tuple[ServeLaunch, ServerTransport]:
    script = _stand_in(tmp_path, SILENT_SERVER)
    launch = build_serve_launch(
        binary=str(script), port=_port(), password="pw", env=dict(os.environ)
    )
    server = _server(launch, tmp_path)
    await server.start()
    return launch, server


async def test_readiness_deadline_fires_on_a_server_that_never_answers(tmp_path: Path) -> None:
    launch, server = await _started_silent_server(tmp_path)
    started = time.monotonic()
    try:
        with pytest.raises(ServerStartTimeout) as info:
            await wait_ready(server, directory=str(tmp_path), deadline=2.0, probe_timeout=0.3)
    finally:
        await server.kill(grace=2.0)
        await server.aclose()
    elapsed = time.monotonic() - started
    assert 2.0 <= elapsed < 5.0
    err = info.value
    assert err.url == launch.url and err.tries >= 2 and "GET /global/health" in err.last
    assert isinstance(err, TimeoutError)
    assert server.returncode is not None  # stopped by PID


async def test_cancelling_readiness_cancels_the_probe_under_way(tmp_path: Path) -> None:
    _, server = await _started_silent_server(tmp_path)
    try:
        ready = asyncio.ensure_future(
            wait_ready(server, directory=str(tmp_path), first_probe_timeout=30.0)
        )
        await asyncio.sleep(0.5)  # a probe hangs on the silent server
        ready.cancel()
        with pytest.raises(asyncio.CancelledError):
            await ready
        await asyncio.sleep(0)
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        assert not [t for t in others if "request" in repr(t.get_coro()) and not t.done()]
    finally:
        await server.kill(grace=2.0)
        await server.aclose()


async def _ready_on_booting_server(
    tmp_path: Path, stand_in_env: dict[str, str], **kw: float
) -> str:
    """``wait_ready`` on ``BOOTING_SERVER`` (its settings in ``stand_in_env``), then its stop."""
    script = _stand_in(tmp_path, BOOTING_SERVER)
    env = {**os.environ, "STAND_IN_LOG": str(tmp_path / "held.log"), **stand_in_env}
    launch = build_serve_launch(binary=str(script), port=_port(), password="pw", env=env)
    server = _server(launch, tmp_path)
    await server.start()
    try:
        kw.setdefault("first_probe_timeout", 0.1)
        return await wait_ready(server, directory=str(tmp_path), interval=0.025, **kw)
    finally:
        await server.kill(grace=2.0)
        await server.aclose()


async def test_a_probe_lost_while_the_server_boots_costs_a_short_timeout(tmp_path: Path) -> None:
    """A health probe whose connection the booting server accepted and never answers is given up
    after ``first_probe_timeout``, not the whole ``probe_timeout``."""
    # With the whole probe_timeout per probe, the first held probe alone would take 60 s.
    version = await asyncio.wait_for(
        _ready_on_booting_server(
            tmp_path, {"STAND_IN_HOLD": "0.5"}, deadline=120.0, probe_timeout=60.0
        ),
        15.0,
    )
    assert version == "9.9.9"
    held = (tmp_path / "held.log").read_text()
    assert held.count("held") >= 1  # a probe did land in the window and was lost


async def test_the_listening_line_ends_a_probe_the_booting_server_holds(tmp_path: Path) -> None:
    """A probe held by the booting server is dropped when the server prints that it listens, and
    the next one is answered: readiness does not wait out the held probe's timeout."""
    # Every probe may wait 60 s: only the line can end the held one within the 15 s bound.
    version = await asyncio.wait_for(
        _ready_on_booting_server(
            tmp_path,
            {"STAND_IN_HOLD": "0.5"},
            deadline=120.0,
            probe_timeout=60.0,
            first_probe_timeout=60.0,
        ),
        15.0,
    )
    assert version == "9.9.9"
    assert (tmp_path / "held.log").read_text().count("held") == 1  # the one probe it held


async def test_a_server_that_never_says_it_listens_is_still_probed(tmp_path: Path) -> None:
    """Without the line (another version, a replay), the short probes alone find the server."""
    version = await asyncio.wait_for(
        _ready_on_booting_server(
            tmp_path,
            {"STAND_IN_HOLD": "0.5", "STAND_IN_QUIET": "1"},
            deadline=120.0,
            probe_timeout=60.0,
        ),
        15.0,
    )
    assert version == "9.9.9"
    assert (tmp_path / "held.log").read_text().count("held") >= 1


async def test_printed_sees_a_line_in_the_tail_or_a_later_one_and_ends_with_the_output(
    tmp_path: Path,
) -> None:
    body = (
        "import sys, time\nprint('early', flush=True)\nsys.stdin.readline()\n"
        "print('late marker', flush=True)\nsys.stdin.readline()\n"
    )
    script = _stand_in(tmp_path, body)
    launch = ServeLaunch(
        argv=[str(script)], env=dict(os.environ), url="http://127.0.0.1:9", password="x"
    )
    server = _server(launch, tmp_path)
    await server.start()
    try:
        await asyncio.wait_for(_printed(server, "early"), 10)
        assert await server.printed(b"early", 5.0)  # already in the tail
        assert not await server.printed(b"marker", 0.2)  # not yet: the timeout ends the wait
        waiting = asyncio.ensure_future(server.printed(b"marker", 10.0))
        await asyncio.sleep(0.05)
        assert not waiting.done()
        await server.process.write_line(b"")
        assert await asyncio.wait_for(waiting, 10.0)  # printed after the wait began
        never = asyncio.ensure_future(server.printed(b"never", 60.0))
        await server.process.write_line(b"")  # the stand-in exits: the output and the wait end
        assert await asyncio.wait_for(never, 10.0) is False
    finally:
        await server.kill(grace=2.0)
        await server.aclose()


async def test_a_server_slow_to_answer_still_gets_the_whole_probe_timeout(tmp_path: Path) -> None:
    """After the first few probes that time out at ``first_probe_timeout``, each one doubles the
    next one's timeout, so a server that answers in 0.5 s is reached."""
    version = await _ready_on_booting_server(
        tmp_path,
        {"STAND_IN_HOLD": "0", "STAND_IN_DELAY": "0.5"},
        deadline=10.0,
        probe_timeout=3.0,
    )
    assert version == "9.9.9"


async def test_a_server_that_exits_is_reported_at_once(tmp_path: Path) -> None:
    script = _stand_in(tmp_path, "import sys\nprint('boom')\nsys.exit(3)\n")
    launch = build_serve_launch(
        binary=str(script), port=_port(), password="pw", env=dict(os.environ)
    )
    server = _server(launch, tmp_path)
    await server.start()
    with pytest.raises(ServerStartTimeout) as info:
        await wait_ready(server, directory=str(tmp_path), deadline=30.0, probe_timeout=0.3)
    assert "exited with code 3" in info.value.last
    assert "boom" in info.value.stderr
    await server.kill()
    await server.aclose()


async def test_stop_kills_a_server_that_ignores_sigterm(tmp_path: Path) -> None:
    body = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('up', flush=True)\ntime.sleep(600)\n"
    script = _stand_in(tmp_path, body)
    launch = ServeLaunch(
        argv=[str(script)], env=dict(os.environ), url="http://127.0.0.1:9", password="x"
    )
    server = _server(launch, tmp_path)
    await server.start()
    await asyncio.wait_for(_printed(server, "up"), 10)
    code = await server.kill(grace=0.5)
    await server.aclose()
    assert code is not None and code < 0


async def test_adapter_start_fails_cleanly_with_a_stalled_server(tmp_path: Path) -> None:
    script = _stand_in(tmp_path, SILENT_SERVER)
    adapter = OpenCodeAdapter(
        cwd=str(tmp_path), binary=str(script), attach_root=tmp_path / "corral", ready_deadline=1.5
    )
    with pytest.raises(ServerStartTimeout):
        await adapter.start("s1")
    assert adapter.server is not None and adapter.server.returncode is not None
    assert not (tmp_path / "corral" / "attach").exists() or not list(
        (tmp_path / "corral" / "attach").iterdir()
    )


def _server(launch: ServeLaunch, cwd: Path) -> ServerTransport:
    return ServerTransport(
        launch.argv,
        env=launch.env,
        cwd=str(cwd),
        url=launch.url,
        auth=(USERNAME, launch.password),
    )


async def _printed(server: ServerTransport, text: str) -> None:
    # The stand-in has no other signal that its SIGTERM handler is installed.
    while text not in server.stderr_tail:  # noqa: ASYNC110
        await asyncio.sleep(0.05)


def _port() -> int:
    from corral.adapters._opencode_server import free_port

    return free_port()


# ── SSE ──


def test_sse_framing() -> None:
    msgs = parse_sse_lines(
        [": comment", "event: ping", "id: 7", 'data: {"a":', "data: 1}", "", "data:x", ""]
    )
    assert [(m.event, m.id, m.data) for m in msgs] == [
        ("ping", "7", '{"a":\n1}'),
        ("message", "7", "x"),
    ]
    framer = SseFramer()
    assert framer.feed_line("retry: 250") is None and framer.retry_ms == 250
    assert framer.feed_line("") is None  # nothing to dispatch


async def _split(chunks: list[str], limit: int = 1 << 30) -> list[object]:
    async def source():  # type: ignore[no-untyped-def]
        for chunk in chunks:
            yield chunk

    return [line async for line in _sse._split_lines(source(), limit)]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab\r\n", max_size=40), st.lists(st.integers(0, 40), max_size=6))
def test_sse_lines_split_the_same_however_the_stream_is_chunked(text: str, cuts: list[int]) -> None:
    bounds = sorted({min(c, len(text)) for c in cuts})
    chunks = [text[a:b] for a, b in zip([0, *bounds], [*bounds, len(text)], strict=True)]
    want = re.split(r"\r\n|\r|\n", text)
    if want[-1] == "":
        want.pop()
    assert asyncio.run(_split(chunks)) == want


def test_an_overlong_sse_line_is_skipped_without_holding_it() -> None:
    chunks = ["data: ok\n", "data: " + "x" * 50, "x" * 50, "x\ndata: after\n"]
    got = asyncio.run(_split(chunks, limit=64))
    assert got == ["data: ok", _sse._Overlong(107), "data: after"]


async def test_sse_client_drops_an_overlong_event_reports_it_and_keeps_the_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_sse, "MAX_EVENT_BYTES", 100)
    body = b"data: " + b"y" * 500 + b"\ndata: rest of it\n\n"  # one line over the limit
    body += (b"data: " + b"z" * 60 + b"\n") * 2 + b"\n"  # lines under it, adding up past it
    body += b"data: next\n\n"
    errors: list[BaseException] = []

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        sse = SseClient(client, "http://t/event", retry=0.01, on_error=errors.append)
        got = []
        async for msg in sse:
            got.append(msg.data)
            if msg.data == "next":
                sse.close()
    assert got == ["next"]  # the huge event and the one adding up past the limit were dropped
    assert [type(e) for e in errors] == [OverlongEvent, OverlongEvent]
    sizes = [e.size for e in errors if isinstance(e, OverlongEvent)]
    assert sizes == [506, 120]


async def test_sse_client_reconnects_with_last_event_id() -> None:
    calls: list[str | None] = []
    bodies = [b"id: 1\ndata: one\n\n", b"data: two\r\n\r\n"]

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.headers.get("last-event-id"))
        body = bodies[len(calls) - 1] if len(calls) <= len(bodies) else b": idle\n\n"
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    connects = 0

    async def on_connect() -> None:
        nonlocal connects
        connects += 1

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        sse = SseClient(client, "http://t/event", retry=0.01, on_connect=on_connect)
        got = []
        async for msg in sse:
            got.append(msg.data)
            if len(got) == 2:
                sse.close()
    assert got == ["one", "two"]
    assert calls[:2] == [None, "1"]
    assert connects == 2


# ── adapter helpers ──


def test_permission_rulesets_and_flag() -> None:
    assert permission_ruleset("ask") == [{"permission": "*", "pattern": "*", "action": "ask"}]
    with pytest.raises(ConfigError):
        permission_ruleset("sometimes")
    assert permission_ruleset("acceptEdits")[-1] == {
        "permission": "edit",
        "pattern": "*",
        "action": "allow",
    }


def test_prompt_parts_inline_images_and_reference_files(tmp_path: Path) -> None:
    doc = tmp_path / "notes.md"
    doc.write_text("# notes")
    parts = prompt_parts(
        "look",
        [
            Attachment(data=b"\x89PNG", media_type="image/png", name="p.png"),
            Attachment(path=str(doc), media_type="text/markdown"),
        ],
    )
    assert parts[0] == {"type": "text", "text": "look"}
    assert parts[1]["url"] == "data:image/png;base64," + base64.b64encode(b"\x89PNG").decode()
    assert parts[1]["filename"] == "p.png" and parts[1]["mime"] == "image/png"
    assert parts[2]["url"] == doc.resolve().as_uri() and parts[2]["filename"] == "notes.md"


def test_attach_records_round_trip(tmp_path: Path) -> None:
    record = AttachRecord(
        session_id="corral-1",
        agent_session_id="ses_abc",
        url="http://127.0.0.1:1234",
        password="secret",
        username="opencode",
        cwd="/repo",
        binary="/bin/opencode",
        pid=os.getpid(),
    )
    path = write_record(record, tmp_path)
    assert path.stat().st_mode & 0o777 == 0o600
    assert find_record("ses_abc", tmp_path) == record
    assert find_record("corral-1", tmp_path) == record
    assert record.command() == [
        "/bin/opencode",
        "attach",
        "http://127.0.0.1:1234",
        "--session",
        "ses_abc",
        "--dir",
        "/repo",
    ]
    assert record.env()["OPENCODE_SERVER_PASSWORD"] == "secret"
    remove_record(path)
    with pytest.raises(SessionError):
        find_record("ses_abc", tmp_path)


def test_corral_attach_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from corral.cli import build_app

    monkeypatch.setenv("CORRAL_HOME", str(tmp_path))
    runner = CliRunner()
    assert "no attachable sessions" in runner.invoke(build_app(), ["attach", "--list"]).output
    missing = runner.invoke(build_app(), ["attach", "ses_nope"])
    assert missing.exit_code != 0
    write_record(
        AttachRecord(
            session_id="corral-9",
            agent_session_id="ses_9",
            url="http://127.0.0.1:5555",
            password="hunter2",
            username="opencode",
            cwd="/repo",
            binary="opencode",
            pid=os.getpid(),
        )
    )
    listed = runner.invoke(build_app(), ["attach", "--list"])
    assert "corral-9" in listed.output and "ses_9" in listed.output
    shown = runner.invoke(build_app(), ["attach", "corral-9", "--print"])
    assert shown.exit_code == 0
    assert "opencode attach http://127.0.0.1:5555 --session ses_9 --dir /repo" in shown.output
    assert "hunter2" not in shown.output + listed.output
