"""P4 — the event board: ingestion events/s at concurrency 1 and 20 with 5 SSE viewers.

Each board runs as its own process on loopback and gets the same load from this process: ``n``
distinct seed-002 v1 events POSTed to ``/api/events`` by ``c`` concurrent keep-alive clients, while
5 viewers (in a process of their own) follow the live stream. Reported per board and concurrency: events/s over the posting
phase, POST latency p50/p99, delivery latency (POST sent → a viewer has it) p50/p99, and whether
every viewer received every event.

The anchor is the seed-002 reference board (``12vectors/bench``), when a checkout of it is given
(``--bench-board PATH`` or ``BENCH_BOARD``; a bare git directory is exported to a temp dir first):
it runs side by side in the same run on the same load and the ratio is printed. Goal: ≥ 5× its
events/s at c=20 with 5 viewers, p99 < 20 ms, no event lost. Its code is never copied here.

    python -m benchmarks.bench_board [--n 3000] [--bench-board ~/src/bench]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path

VIEWERS = 5
SETTLE = 15.0
"""Seconds the viewers get, after the last POST, to receive everything."""


# ── servers ─────────────────────────────────────────────────────────────────────────────────────


def _serve_corral(db: str) -> None:
    """Child process: corral's app on an ephemeral port; prints the port, serves until killed."""
    import uvicorn

    from corral.server import Settings, create_app

    app = create_app(Settings(db_path=Path(db)))
    # IPPROTO_TCP spelled out: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and
    # without it every keep-alive response waits ~40 ms on a delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    print(sock.getsockname()[1], flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="error", access_log=False))
    server.run(sockets=[sock])


@dataclass
class Board:
    name: str
    url: str
    proc: subprocess.Popen[bytes]
    stream_path: str
    kind: str  # "corral" or "bench"


def _wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the board exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listened on port {port} within {timeout}s")


@contextlib.contextmanager
def corral_board(tmp: Path) -> Iterator[Board]:
    env = {**os.environ, "CORRAL_HOME": str(tmp / "home")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.bench_board", "--serve-corral", str(tmp / "board.db")],
        stdout=subprocess.PIPE,
        env=env,
        cwd=Path(__file__).resolve().parents[1],
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        _wait_port(port, proc)
        yield Board("corral", f"127.0.0.1:{port}", proc, "/api/events/stream", "corral")
    finally:
        _stop(proc)


def _checkout(path: Path, tmp: Path) -> Path:
    if (path / "manager" / "core" / "board.py").is_file():
        return path
    # A bare git directory (such as a fetched mirror): export its HEAD.
    out = tmp / "bench-checkout"
    out.mkdir()
    archive = subprocess.run(
        ["git", f"--git-dir={path}", "archive", "HEAD"], capture_output=True, check=True, timeout=60
    )
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive.stdout, check=True, timeout=60)
    return out


def _free_port() -> int:
    # The reference board takes a fixed --port; ask the OS for a free one first.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def bench_board(path: Path, tmp: Path) -> Iterator[Board]:
    root = _checkout(path, tmp)
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "manager/core/board.py", "--port", str(port), "--no-open"],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "BOARD_PORT": str(port)},
        start_new_session=True,
    )
    try:
        _wait_port(port, proc)
        yield Board("bench (seed 002)", f"127.0.0.1:{port}", proc, "/api/stream", "bench")
    finally:
        _stop(proc)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    import signal

    for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(grace)


# ── the load ────────────────────────────────────────────────────────────────────────────────────


class Conn:
    """One keep-alive HTTP/1.1 client connection that reconnects when the server closes."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: bytes) -> int:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        self.writer.write(
            b"POST %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s"
            % (path.encode(), self.host.encode(), self.port, len(body), body)
        )
        await self.writer.drain()
        status_line = await self.reader.readline()
        length, close = 0, status_line.startswith(b"HTTP/1.0")
        while (line := await self.reader.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"connection" and value.strip().lower() == b"close":
                close = True
        await self.reader.readexactly(length)
        if close:
            self.close()
        return int(status_line.split()[1])

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


@dataclass
class Viewer:
    received: dict[int, float] = field(default_factory=dict)
    missed: int = 0
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    complete: asyncio.Event = field(default_factory=asyncio.Event)
    expected: int = 0


async def follow(board: Board, run_id: str, viewer: Viewer, stop: asyncio.Event) -> None:
    host, port = board.url.split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(
        b"GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n"
        % (board.stream_path.encode(), board.url.encode())
    )
    await writer.drain()
    prefix = f"{run_id} ".encode()
    # Only the summary is needed: a regex on the raw line costs the client far less than json.
    number = re.compile(rb'"summary": ?"' + re.escape(prefix) + rb'(\d+)"')
    carry = b""
    try:
        while not stop.is_set():
            try:
                # Whole chunks, not lines: the viewers must not be what limits the measurement.
                chunk = await asyncio.wait_for(reader.read(1 << 16), 0.5)
            except TimeoutError:
                continue
            if not chunk:
                return
            viewer.ready.set()
            data = carry + chunk
            cut = data.rfind(b"\n") + 1
            data, carry = data[:cut], data[cut:]
            viewer.missed += data.count(b"event: missed")
            now = time.perf_counter()
            for found in number.finditer(data):
                viewer.received[int(found.group(1))] = now
            if len(viewer.received) >= viewer.expected:
                viewer.complete.set()
    finally:
        writer.close()


@dataclass
class Result:
    board: str
    concurrency: int
    n: int
    events_per_s: float
    post_p50_ms: float
    post_p99_ms: float
    deliver_p50_ms: float
    deliver_p99_ms: float
    lost: int
    errors: int
    missed_notices: int

    @property
    def complete(self) -> bool:
        return self.lost == 0 and self.errors == 0


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def _view(board: Board, run_id: str, n: int, pipe: Connection) -> None:
    stop = asyncio.Event()
    viewers = [Viewer(expected=n) for _ in range(VIEWERS)]
    tasks = [asyncio.create_task(follow(board, run_id, v, stop)) for v in viewers]
    await asyncio.wait_for(asyncio.gather(*(v.ready.wait() for v in viewers)), 10)
    pipe.send("ready")
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, pipe.recv)  # "posted"
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.gather(*(v.complete.wait() for v in viewers)), SETTLE)
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    pipe.send([(v.received, v.missed) for v in viewers])


def _viewer_process(board: Board, run_id: str, n: int, pipe: Connection) -> None:
    """Child process: the 5 SSE viewers, so reading the streams never slows the posting side."""
    asyncio.run(_view(board, run_id, n, pipe))


async def load(board: Board, n: int, concurrency: int) -> Result:
    run_id = f"bench-{uuid.uuid4().hex[:8]}"
    ours, theirs = multiprocessing.get_context("spawn").Pipe()
    child = multiprocessing.get_context("spawn").Process(
        target=_viewer_process, args=(_portable(board), run_id, n, theirs), daemon=True
    )
    child.start()
    loop = asyncio.get_running_loop()
    if not await loop.run_in_executor(None, ours.poll, 30) or ours.recv() != "ready":
        raise RuntimeError("the viewers did not connect")
    host, port = board.url.split(":")
    sent_at: dict[int, float] = {}
    post_latency: list[float] = []
    errors = 0
    counter = iter(range(n))

    async def client() -> None:
        nonlocal errors
        conn = Conn(host, int(port))
        try:
            for i in counter:
                body = json.dumps(
                    {
                        "v": 1,
                        "session": f"{run_id}-{i % 7}",
                        "kind": "command",
                        "summary": f"{run_id} {i}",
                        "cmd": "pytest -q",
                        "agent": "bench",
                    }
                ).encode()
                started = time.perf_counter()
                sent_at[i] = started
                status = await conn.post("/api/events", body)
                post_latency.append(time.perf_counter() - started)
                if status >= 300:
                    errors += 1
        finally:
            conn.close()

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(concurrency)))
    elapsed = time.perf_counter() - started
    ours.send("posted")
    if not await loop.run_in_executor(None, ours.poll, SETTLE + 30):
        raise RuntimeError("the viewers never reported")
    seen: list[tuple[dict[int, float], int]] = ours.recv()
    child.join(10)
    delivery = [t - sent_at[i] for received, _ in seen for i, t in received.items() if i in sent_at]
    return Result(
        board=board.name,
        concurrency=concurrency,
        n=n,
        events_per_s=n / elapsed,
        post_p50_ms=_pct(post_latency, 0.50),
        post_p99_ms=_pct(post_latency, 0.99),
        deliver_p50_ms=_pct(delivery, 0.50),
        deliver_p99_ms=_pct(delivery, 0.99),
        lost=sum(n - len(received) for received, _ in seen),
        errors=errors,
        missed_notices=sum(missed for _, missed in seen),
    )


def _portable(board: Board) -> Board:
    # A Popen cannot cross to the viewer process, and it needs only the address.
    return Board(board.name, board.url, None, board.stream_path, board.kind)  # type: ignore[arg-type]


def _row(r: Result) -> str:
    ok = "yes" if r.complete else f"NO ({r.lost} lost, {r.errors} errors)"
    return (
        f"{r.board:18s} c={r.concurrency:<3d} {r.events_per_s:8.0f} ev/s   "
        f"POST p50 {r.post_p50_ms:6.2f} ms p99 {r.post_p99_ms:6.2f} ms   "
        f"delivery p50 {r.deliver_p50_ms:6.2f} ms p99 {r.deliver_p99_ms:7.2f} ms   "
        f"all viewers got all: {ok}"
    )


def run(n: int = 3000, bench_path: Path | None = None) -> dict[str, object]:
    """Run P4; returns the results and whether corral met its goals."""
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="corral-bench-board-") as tmp_name:
        tmp = Path(tmp_name)
        boards: list[contextlib.AbstractContextManager[Board]] = [corral_board(tmp / "corral")]
        (tmp / "corral").mkdir()
        if bench_path is not None:
            (tmp / "bench").mkdir()
            boards.append(bench_board(bench_path, tmp / "bench"))
        for manager in boards:
            with manager as board:
                for concurrency in (1, 20):
                    result = asyncio.run(load(board, n, concurrency))
                    results.append(result)
                    print(_row(result), flush=True)
    ours = {r.concurrency: r for r in results if r.board == "corral"}
    theirs = {r.concurrency: r for r in results if r.board != "corral"}
    ratio = None
    for c in (1, 20):
        if c in theirs:
            ratio_c = ours[c].events_per_s / theirs[c].events_per_s
            print(f"ratio corral / bench at c={c}: {ratio_c:.1f}×")
            if c == 20:
                ratio = ratio_c
    c20 = ours[20]
    goals = {
        "ratio_c20_at_least_5": ratio is not None and ratio >= 5,
        "p99_post_under_20ms": c20.post_p99_ms < 20,
        "no_event_lost": all(r.complete for r in results if r.board == "corral"),
    }
    print("goals:", ", ".join(f"{k}={'met' if v else 'NOT met'}" for k, v in goals.items()))
    return {"results": [r.__dict__ for r in results], "ratio_c20": ratio, "goals": goals}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_board")
    parser.add_argument("--n", type=int, default=3000, help="Events per run.")
    parser.add_argument("--bench-board", type=Path, default=os.environ.get("BENCH_BOARD") or None)
    parser.add_argument("--serve-corral", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_corral:
        _serve_corral(args.serve_corral)
        return 0
    outcome = run(args.n, args.bench_board)
    goals = outcome["goals"]
    assert isinstance(goals, dict)
    return 0 if goals["no_event_lost"] else 1


if __name__ == "__main__":
    sys.exit(main())
