"""Helpers of the board's real-CLI tests: the service in a thread, a live follower of its SSE
stream, and an interactive agent under a pseudo-terminal."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import select
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from corral._paths import ensure_token, read_token
from corral.server import Settings, create_app

Event = dict[str, Any]


class BoardFollower:
    """Reads ``/api/events/stream?after=0`` in a thread; :meth:`wait` blocks on a condition."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.token = read_token()
        self.events: list[Event] = []
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        timeout = httpx.Timeout(5, read=None)
        with (
            httpx.Client(
                base_url=self.url,
                timeout=timeout,
                headers={"Authorization": f"Bearer {self.token}"},
            ) as client,
            client.stream("GET", "/api/events/stream?after=0") as response,
        ):
            data = None
            for line in response.iter_lines():
                if self._stop.is_set():
                    return
                if line.startswith("data: "):
                    data = json.loads(line[6:])
                elif not line and data is not None:
                    with self._cond:
                        self.events.append(data)
                        self._cond.notify_all()
                    data = None

    def wait(self, predicate: Callable[[list[Event]], bool], timeout: float) -> list[Event]:
        with self._cond:
            ok = self._cond.wait_for(lambda: predicate(self.events), timeout)
            if not ok:
                raise AssertionError(f"board events never matched; got {self.kinds()}")
            return list(self.events)

    def kinds(self) -> list[tuple[str, bool]]:
        return [(e["kind"], bool(e.get("running"))) for e in self.events]

    def stop(self) -> None:
        self._stop.set()


@contextlib.contextmanager
def board_service(db: Path) -> Iterator[str]:
    """``corral serve``'s app on an ephemeral loopback port, in a thread; yields its URL.

    Like ``corral serve`` it uses the corral home's token file, which the wired emitters and
    ``corral job`` read to authenticate their POSTs."""
    app = create_app(Settings(db_path=db, token=ensure_token()))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline:
            raise AssertionError("the board service did not start")
        time.sleep(0.05)
    try:
        yield url
    finally:
        board = getattr(app.state, "board", None)
        if board is not None:
            board.fanout.close()
        server.should_exit = True
        thread.join(15)
        sock.close()


class PtyAgent:
    """An interactive agent CLI on a pseudo-terminal, its screen output drained continuously."""

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str], cwd: Path) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: become the agent
            try:
                os.chdir(cwd)
                os.execve(argv[0], list(argv), dict(env))
            finally:
                os._exit(127)
        self.output = bytearray()
        self.status: int | None = None
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self.fd], [], [], 0.2)
                if ready:
                    chunk = os.read(self.fd, 65536)
                    if not chunk:
                        return
                    self.output += chunk
            except OSError:
                return

    def type(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def alive(self) -> bool:
        if self.status is not None:
            return False
        pid, status = os.waitpid(self.pid, os.WNOHANG)
        if pid == 0:
            return True
        self.status = status
        return False

    def wait_exit(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while self.alive():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)
        return True

    def kill(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if not self.alive():
                break
            with contextlib.suppress(ProcessLookupError):
                os.killpg(os.getpgid(self.pid), sig)
            self.wait_exit(5)
        with contextlib.suppress(OSError):
            os.close(self.fd)

    def screen_tail(self, n: int = 2000) -> str:
        return bytes(self.output[-n:]).decode(errors="replace")
