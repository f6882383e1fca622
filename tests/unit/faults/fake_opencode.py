"""A fake ``opencode serve`` (HTTP + ``/event`` SSE) that misbehaves as ``FAULT_MODE`` says.

It answers just the calls the driver makes (``/global/health``, ``GET /session``, ``POST
/session``, ``/session/status``, ``prompt_async``, ``abort``) with basic auth, and streams the
event shapes of the recorded 1.18.33 fixtures. Writes go to every open ``/event`` connection
synchronously, so a fault that ends the process comes after its bytes. Lines the shared faults
write raw (``_misbehave.write``) become ``data:`` fields: a newline-terminated line is one
dispatched frame, a line without one is a frame left unterminated.

One mode of its own: ``ignore-abort`` answers the abort (``true``) and keeps the turn running.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import _misbehave as m

SID = "ses_fault"
MID = "msg_fault_assistant"
PID_ = "prt_fault_text"
ABORTED = threading.Event()
HUNG = threading.Event()
IDLE = threading.Event()
IDLE.set()


class Bus:
    """The open ``/event`` connections; a write that fails drops its connection."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.conns: list[Any] = []

    def send(self, data: bytes) -> None:
        with self.lock:
            for conn in list(self.conns):
                try:
                    conn.write(data)
                    conn.flush()
                except OSError:
                    self.conns.remove(conn)


BUS = Bus()


def event(etype: str, props: dict[str, Any]) -> None:
    BUS.send(b"data: " + json.dumps({"type": etype, "properties": props}).encode() + b"\n\n")


class SseOut:
    """``_misbehave.write`` target: raw lines become ``data:`` fields."""

    def write(self, data: bytes) -> None:
        *whole, rest = data.split(b"\n")
        for piece in whole:
            BUS.send(b"data: " + piece + b"\n\n")
        if rest:
            BUS.send(b"data: " + rest)

    def flush(self) -> None:
        pass


def status(kind: str) -> None:
    event("session.status", {"sessionID": SID, "status": {"type": kind}})


def part(text: str, done: bool) -> dict[str, Any]:
    time_ = {"start": 1, "end": 2} if done else {"start": 1}
    return {
        "sessionID": SID,
        "part": {
            "id": PID_,
            "messageID": MID,
            "sessionID": SID,
            "type": "text",
            "text": text,
            "time": time_,
        },
    }


def delta_props(text: str) -> dict[str, Any]:
    return {"sessionID": SID, "messageID": MID, "partID": PID_, "field": "text", "delta": text}


def finish() -> None:
    event("message.part.updated", part("first words done", done=True))
    idle()


def idle() -> None:
    IDLE.set()
    status("idle")
    event("session.idle", {"sessionID": SID})


def cancelled() -> None:
    event(
        "session.error",
        {
            "sessionID": SID,
            "error": {"name": "MessageAbortedError", "data": {"message": "Aborted"}},
        },
    )
    idle()


def wait_cancel() -> None:
    ABORTED.wait()


def bad_message() -> bytes:
    return json.dumps({"type": "message.part.delta", "properties": delta_props("cut")}).encode() + (
        b"\n"
    )


def turn() -> None:
    # As the real server does (a model round trip), the turn's events follow the 204: the driver
    # opens the turn on that answer and treats an idle that comes before it as a late one.
    time.sleep(0.2)
    status("busy")
    info = {"id": MID, "role": "assistant", "sessionID": SID, "modelID": "fake", "time": {}}
    event("message.updated", {"sessionID": SID, "info": info})
    event("message.part.updated", part("", done=False))
    event("message.part.delta", delta_props("first words "))
    if m.MODE == "ignore-abort" and m.armed():
        m.note_pid(os.getpid())
        m._sleeper(new_session=False)
        return  # the turn never ends; the abort is answered and ignored
    if m.MODE in ("hang", "ignore-term") and m.armed():
        # as _misbehave's hang; the signals were ignored at start (only the main thread may)
        HUNG.set()
        m.note_pid(os.getpid())
        m._sleeper(new_session=False)
        m.hang_forever()
    if m.MODE == "malformed":  # framing the SSE grammar allows but no event uses
        BUS.send(b": a comment\n\nretry: soon\nid: a\0b\nevent: odd\n\n\n\ndata\n\n")
    m.commit(
        lambda obj: BUS.send(b"data: " + json.dumps(obj).encode() + b"\n\n"),
        finish=finish,
        cancelled=cancelled,
        wait_cancel=wait_cancel,
        bad_message=bad_message,
    )


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _authorized(self) -> bool:
        user = os.environ.get("OPENCODE_SERVER_USERNAME", "")
        password = os.environ.get("OPENCODE_SERVER_PASSWORD", "")
        want = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        return self.headers.get("Authorization") == want

    def _reply(self, code: int, body: Any = None) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _enter(self) -> str | None:
        if HUNG.is_set():
            m.hang_forever()
        if not self._authorized():
            self._reply(401, {"error": "unauthorized"})
            return None
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        return urlsplit(self.path).path

    def do_GET(self) -> None:
        path = self._enter()
        if path == "/global/health":
            self._reply(200, {"healthy": True, "version": "0.0.0-fault"})
        elif path == "/session":
            self._reply(200, [])
        elif path == "/session/status":
            self._reply(200, {} if IDLE.is_set() else {SID: {"type": "busy"}})
        elif path == "/event":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(b'data: {"type": "server.connected", "properties": {}}\n\n')
            self.wfile.flush()
            with BUS.lock:
                BUS.conns.append(self.wfile)
            threading.Event().wait()  # the connection stays open until the process ends
        elif path is not None:
            self._reply(404, {"error": path})

    def do_POST(self) -> None:
        path = self._enter()
        if path == "/session":
            self._reply(200, {"id": SID, "title": "corral session", "directory": os.getcwd()})
        elif path == f"/session/{SID}/prompt_async":
            IDLE.clear()
            self._reply(204)
            threading.Thread(target=turn, daemon=True).start()
        elif path == f"/session/{SID}/abort":
            ABORTED.set()
            if m.PIDFILE:
                with open(m.PIDFILE + ".aborts", "a") as fh:
                    fh.write("abort\n")
            self._reply(200, True)
        elif path is not None:
            self._reply(404, {"error": path})


def main() -> None:
    args = sys.argv[1:]
    port = int(args[args.index("--port") + 1])
    m.raw_out = SseOut()  # type: ignore[assignment]
    if m.MODE == "ignore-term":
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    server.serve_forever()


main()
