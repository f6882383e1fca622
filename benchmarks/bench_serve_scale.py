"""One ``corral serve``, many sessions: throughput, fan-out latency, memory (issue 20 part 3).

    python -m benchmarks.bench_serve_scale [--sessions 500] [--observers 2] [--prompts 4]

A real ``corral serve`` process runs on 127.0.0.1 with the scripted in-process adapter
(``corral.testing.scripted_adapter``), so every figure is corral's own cost, no agent CLI's. The
benchmark then:

1. creates ``--sessions`` sessions and samples the server's RSS before and after: RSS per idle
   session;
2. opens ``--observers`` SSE streams on every session (``GET /api/sessions/{id}/stream``);
3. sends ``--prompts`` prompts to every session at once; each scripted reply streams ``--chunks``
   text deltas, so the load is a steady stream of events across all sessions;
4. waits until every observer has seen every session's last turn end.

It prints events/s stored and fanned out (events stored ÷ wall time of step 3–4, and deliveries ÷
the same), p50/p99 latency from the envelope's timestamp (assigned by the session layer the moment
the adapter yields the event) to the observer reading it, whether every observer received every
event in order (no gap, no duplicate, no reordering of ``seq``), and SQLite write amplification
(bytes the server process wrote to disk ÷ bytes of event JSON it delivered once).

Goals (issue 20): >= 20,000 events/s, p99 < 50 ms, < 1 MB RSS per idle session, no observer misses
an event. The observers and the prompt poster run in this one Python process, on raw sockets (httpx
and a JSON decode per event cost more CPU than the server); on a 2-core machine they compete with
the server for CPU, which the printed client and server CPU times make visible. ``--profile FILE``
samples the server with py-spy (collapsed stacks) during the load.

The anchor, measured in the same run before and after the load (:func:`anchor_rate`): the work
every event needs with no service around it, in one loop on one thread: numbered, encoded,
framed for SSE and inserted into an in-memory SQLite table in batches. It shows how fast the
machine ran during the run (this 2-core VM runs the same code up to 1.6x faster in some
quarter-hours than in others), and the ratio of the stored events/s to it what share of the bare
loop's rate the service keeps with its HTTP, fan-out, queue and durability around each event.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from ._bytecode import as_installed

TOKEN = "bench-token"
SCRIPTED = "corral.testing.scripted_adapter:ScriptedAdapter"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def _writers_rss_kib(pid: int) -> int:
    """The RSS of the service's database writer process, if it has one (decision 051)."""
    total = 0
    for kid in _writer_pids(pid):
        with contextlib.suppress(OSError, RuntimeError):
            total += _rss_kib(kid)
    return total


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of ``pid`` (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _thread_cpu_s(pid: int) -> dict[str, float]:
    """CPU seconds of the event loop's thread (``main``) and of the others (``others``: the
    database writer, ``asyncio.to_thread`` workers; Python 3.11 does not name them for the OS)."""
    out: dict[str, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = "main" if task.name == str(pid) else "others"
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended meanwhile
            continue
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def _py_spy(out: str, pid: int, *, gil: bool = False) -> subprocess.Popen[bytes]:
    """Sample the server with py-spy (collapsed stacks, all threads) until SIGINT; ``gil``: only
    the samples of the thread holding the GIL (what one core of Python work is spent on)."""
    exe = Path(sys.executable).with_name("py-spy")
    if not exe.exists():
        raise SystemExit(f"--profile needs py-spy, not found at {exe}: run `make bench` once")
    return subprocess.Popen(
        [
            str(exe),
            "record",
            "--pid",
            str(pid),
            "--rate",
            "250",
            "--format",
            "raw",
            "--threads",
            *(["--gil"] if gil else []),
            "-o",
            out,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _writer_pids(pid: int) -> list[int]:
    """The service's database writer process (``corral serve``'s default, decision 051): the
    children of ``pid`` that run ``corral.sessions._writer_process``."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            kids = [int(k) for k in (task / "children").read_text().split()]
        except OSError:
            continue
        for kid in kids:
            with contextlib.suppress(OSError):
                if b"corral.sessions._writer_process" in Path(f"/proc/{kid}/cmdline").read_bytes():
                    found.append(kid)
    return found


def _writer_cpu_s(pid: int) -> float:
    """CPU seconds of the service's database writer process, if it has one."""
    total = 0.0
    for kid in _writer_pids(pid):
        with contextlib.suppress(OSError):
            total += _cpu_s(kid)
    return total


def _write_bytes(pid: int) -> int:
    """Bytes ``pid`` and its database writer process wrote to storage."""
    total = 0
    for proc in (pid, *_writer_pids(pid)):
        try:
            lines = Path(f"/proc/{proc}/io").read_text().splitlines()
        except OSError:
            continue
        total += sum(int(x.split()[1]) for x in lines if x.startswith("write_bytes:"))
    return total


@dataclass
class Observer:
    session_id: str
    seqs: list[int] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    bytes: int = 0
    turns_done: int = 0


async def observe(port: int, obs: Observer, turns: int, ready: asyncio.Event) -> None:
    """A minimal SSE reader on a raw socket, so the client costs as little as it can: it reads
    whole chunks, takes ``seq`` and the type from the ``id:`` / ``event:`` lines and only the
    timestamp out of the JSON (no full decode)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        (
            f"GET /api/sessions/{obs.session_id}/stream HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Authorization: Bearer {TOKEN}\r\nAccept: text/event-stream\r\n\r\n"
        ).encode()
    )
    await writer.drain()
    ready.set()
    rest = b""
    seq = 0
    try:
        while obs.turns_done < turns:
            chunk = await reader.read(1 << 16)
            if not chunk:
                return
            now = time.time()
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            for line in lines:
                if line.startswith(b"id: "):
                    seq = int(line[4:])
                elif line.startswith(b"event: "):
                    if line == b"event: turn.completed":
                        obs.turns_done += 1
                elif line.startswith(b"data: {"):
                    at = line.index(b'"ts":"') + 6
                    ts = line[at : line.index(b'"', at)].decode()
                    obs.bytes += len(line) - 6
                    obs.seqs.append(seq)
                    obs.latencies.append(now - datetime.fromisoformat(ts).timestamp())
    finally:
        writer.close()


class Poster:
    """Prompts over raw keep-alive HTTP/1.1 connections (httpx costs more CPU than the server)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def post(self, path: str, body: dict[str, Any]) -> int:
        data = json.dumps(body).encode()
        if self.idle:
            reader, writer = self.idle.pop()
        else:
            reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        writer.write(
            (
                f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
                f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(data)}\r\n\r\n"
            ).encode()
            + data
        )
        head = await reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        await reader.readexactly(length)
        self.idle.append((reader, writer))
        return status

    def close(self) -> None:
        for _, writer in self.idle:
            writer.close()


def anchor_rate(n: int = 60_000) -> float:
    """Events per second of CPU of the bare per-event loop (the module docstring's anchor)."""
    import sqlite3

    from corral.events import Sequencer, TextDelta, encode

    seq = Sequencer("anchor", "scripted")
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE events (session_id, seq, ts, source, type, envelope)")
    rows: list[tuple[Any, ...]] = []
    frames = 0
    start = time.thread_time()
    for i in range(n):
        envelope = seq.wrap(TextDelta(text=f"lorem {i}"))
        data = encode(envelope)
        frames += len(b"id: %d\nevent: text.delta\ndata: %s\n\n" % (envelope.seq, data))
        rows.append(
            (envelope.session_id, envelope.seq, envelope.ts.isoformat(), "s", "text.delta", data)
        )
        if len(rows) == 256:
            conn.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)", rows)
            rows.clear()
    conn.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)", rows)
    conn.commit()
    elapsed = time.thread_time() - start
    conn.close()
    assert frames > 0
    return n / elapsed


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Start ``corral serve`` (a child process), drive it, stop it."""
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="corral-scale-") as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        # Each reply is long enough to really stream ``--chunks`` deltas of ~10 characters (an
        # "echo: pN" reply would cap a turn at a handful of events and measure prompts, not events).
        reply = ("lorem ipsum " * args.chunks)[: 10 * args.chunks]
        config = {
            "chunks": args.chunks,
            "chunk_delay": args.chunk_delay,
            "ack_mode": "hook",
            "replies": [reply] * args.prompts,
        }
        env = {
            **os.environ,
            "CORRAL_HOME": str(Path(tmp) / "home"),
            "CORRAL_TOKEN": TOKEN,
            "CORRAL_EXTRA_ADAPTERS": SCRIPTED,
            "CORRAL_SCRIPTED_CONFIG": json.dumps(config),
            **({"CORRAL_WRITER": args.writer} if args.writer else {}),
        }
        log = (Path(tmp) / "serve.log").open("wb")
        server = subprocess.Popen(
            [sys.executable, "-m", "corral", "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            return asyncio.run(drive(args, server.pid, port, project))
        except BaseException:
            log.flush()
            tail = (Path(tmp) / "serve.log").read_bytes()[-4000:].decode(errors="replace")
            print(f"the server's output (tail):\n{tail}", file=sys.stderr)
            raise
        finally:
            log.close()
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()


async def drive(args: argparse.Namespace, pid: int, port: int, project: Path) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    base = f"http://127.0.0.1:{port}"
    async with httpx.AsyncClient(
        base_url=base, headers=headers, limits=limits, timeout=60
    ) as client:
        t_start = time.perf_counter()
        for _ in range(200):
            try:
                if (await client.get("/api/health")).status_code == 200:
                    break
            except httpx.TransportError:
                await asyncio.sleep(0.05)
        ready_s = time.perf_counter() - t_start
        rss_before = _rss_kib(pid) + _writers_rss_kib(pid)  # the writer's process too

        async def create() -> str:
            body = {"adapter_id": "scripted", "cwd": str(project)}
            r = await client.post("/api/sessions", json=body)
            r.raise_for_status()
            return str(r.json()["id"])

        sem = asyncio.Semaphore(args.in_flight)

        async def bounded(coro: Any) -> Any:
            async with sem:
                return await coro

        ids = await asyncio.gather(*(bounded(create()) for _ in range(args.sessions)))
        await asyncio.sleep(1.0)
        rss_idle = _rss_kib(pid) + _writers_rss_kib(pid)

        observers = [Observer(sid) for sid in ids for _ in range(args.observers)]
        readies = [asyncio.Event() for _ in observers]
        tasks = [
            asyncio.create_task(observe(port, o, args.prompts, e))
            for o, e in zip(observers, readies, strict=True)
        ]
        await asyncio.gather(*(e.wait() for e in readies))
        await asyncio.sleep(0.5)
        written_before = _write_bytes(pid)
        cpu_before = time.process_time()
        server_cpu_before = _cpu_s(pid)
        writer_cpu_before = _writer_cpu_s(pid)
        threads_before = _thread_cpu_s(pid)
        spy = _py_spy(args.profile, pid, gil=args.profile_gil) if args.profile else None
        t0 = time.perf_counter()

        poster = Poster(port)

        async def prompt(sid: str, n: int) -> None:
            status = await poster.post(f"/api/sessions/{sid}/prompts", {"text": f"p{n}"})
            if status != 201:
                raise RuntimeError(f"prompt refused: HTTP {status}")

        await asyncio.gather(*(bounded(prompt(sid, n)) for n in range(args.prompts) for sid in ids))
        accepted_s = time.perf_counter() - t0
        poster.close()
        await asyncio.wait_for(asyncio.gather(*tasks), args.timeout)
        wall = time.perf_counter() - t0
        client_cpu = time.process_time() - cpu_before
        server_cpu = _cpu_s(pid) - server_cpu_before
        writer_cpu = _writer_cpu_s(pid) - writer_cpu_before
        threads_after = _thread_cpu_s(pid)
        server_threads = {
            name: cpu - threads_before.get(name, 0.0)
            for name, cpu in threads_after.items()
            if cpu - threads_before.get(name, 0.0) >= 0.05
        }
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(60)
        written = _write_bytes(pid) - written_before
        rss_peak = _rss_kib(pid)
        rss_writer = _writers_rss_kib(pid)
    per_session: dict[str, list[int]] = {}
    in_order = True
    for o in observers:
        if o.seqs != sorted(set(o.seqs)) or (
            o.seqs and o.seqs != list(range(o.seqs[0], o.seqs[-1] + 1))
        ):
            in_order = False
        per_session.setdefault(o.session_id, o.seqs) if o.seqs else None
    # Every observer of a session must have seen exactly what the first one saw.
    for o in observers:
        if o.seqs != per_session.get(o.session_id, []):
            in_order = False
    stored = sum(len(s) for s in per_session.values())
    delivered = sum(len(o.seqs) for o in observers)
    once_bytes = sum(o.bytes for o in observers) / max(1, args.observers)
    lat = sorted(x for o in observers for x in o.latencies)
    return {
        "ready_s": ready_s,
        "sessions": args.sessions,
        "observers": len(observers),
        "events_stored": stored,
        "deliveries": delivered,
        "wall_s": wall,
        "accepted_s": accepted_s,
        "stored_per_s": stored / wall,
        "delivered_per_s": delivered / wall,
        "p50_ms": statistics.median(lat) * 1000 if lat else None,
        "p99_ms": lat[int(len(lat) * 0.99) - 1] * 1000 if lat else None,
        "rss_per_idle_session_kib": (rss_idle - rss_before) / args.sessions,
        "rss_peak_mib": rss_peak / 1024,
        "rss_writer_mib": rss_writer / 1024,
        "write_amplification": written / once_bytes if once_bytes else None,
        "every_observer_in_order": in_order,
        "client_cpu_s": client_cpu,
        "server_cpu_s": server_cpu,
        "server_threads_cpu_s": server_threads,
        "server_writer_cpu_s": writer_cpu,
        "load_average": os.getloadavg()[0],
    }


def main(argv: list[str] | None = None) -> int:
    as_installed()  # start-up timed as an install has it: with bytecode (benchmarks._bytecode)
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_serve_scale")
    parser.add_argument("--sessions", type=int, default=500)
    parser.add_argument("--observers", type=int, default=2)
    parser.add_argument("--prompts", type=int, default=4)
    parser.add_argument("--chunks", type=int, default=20)
    parser.add_argument("--chunk-delay", type=float, default=0.0)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument(
        "--in-flight", type=int, default=32, help="prompt POSTs (and session creations) at once"
    )
    parser.add_argument(
        "--writer",
        choices=("process", "thread"),
        help="the service's database writer (CORRAL_WRITER; default: the service's own, process)",
    )
    parser.add_argument("--profile", help="py-spy the server during the load into this file")
    parser.add_argument(
        "--profile-gil",
        action="store_true",
        help="with --profile: only the samples of the thread holding the GIL",
    )
    args = parser.parse_args(argv)
    before = anchor_rate()
    r = run(args)
    anchor = (before + anchor_rate()) / 2
    print(f"service ready to answer:     {r['ready_s']:.2f} s (goal < 0.5 s)")
    writer = args.writer or os.environ.get("CORRAL_WRITER") or "process (the default)"
    print(f"database writer:             {writer}")
    print(f"sessions / SSE observers:    {r['sessions']} / {r['observers']}")
    print(f"events stored:               {r['events_stored']} in {r['wall_s']:.2f} s")
    print(f"prompts accepted (HTTP 201): {r['sessions'] * args.prompts} in {r['accepted_s']:.2f} s")
    print(f"stored events/s:             {r['stored_per_s']:,.0f} (goal >= 20,000)")
    print(
        f"  anchor (bare per-event loop, same run): {anchor:,.0f} events/s of CPU; "
        f"stored ÷ anchor {r['stored_per_s'] / anchor:.3f}"
    )
    print(f"delivered events/s:          {r['delivered_per_s']:,.0f}")
    print(f"adapter→observer p50 / p99:  {r['p50_ms']:.1f} / {r['p99_ms']:.1f} ms (goal p99 < 50)")
    print(f"RSS per idle session:        {r['rss_per_idle_session_kib']:.0f} KiB (goal < 1024)")
    print(
        f"server RSS at the end:       {r['rss_peak_mib']:.0f} MiB"
        f" + its writer process {r['rss_writer_mib']:.0f} MiB"
    )
    wa = r["write_amplification"]
    print(f"SQLite write amplification:  {wa:.1f}x" if wa else "SQLite write amplification: -")
    print(f"every observer, every event, in order: {r['every_observer_in_order']}")
    print(f"client CPU (observers+load): {r['client_cpu_s']:.1f} s")
    print(f"server CPU during the load:  {r['server_cpu_s']:.1f} s")
    wall = r["wall_s"]
    for name, cpu in sorted(r["server_threads_cpu_s"].items(), key=lambda kv: -kv[1]):
        print(f"  thread {name:<20} {cpu:.1f} s ({cpu / wall:.0%} of a core)")
    if r["server_writer_cpu_s"] >= 0.05:
        cpu = r["server_writer_cpu_s"]
        print(f"  its writer process          {cpu:.1f} s ({cpu / wall:.0%} of a core)")
    print(f"  client (observers+load)    {r['client_cpu_s'] / wall:.0%} of a core")
    print(f"load average (1 min):        {r['load_average']:.1f} on {os.cpu_count()} CPUs")
    return 0 if r["every_observer_in_order"] else 1


if __name__ == "__main__":
    sys.exit(main())
