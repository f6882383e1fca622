"""The live path, per event: an agent's stdout line to an SSE observer of ``corral serve`` (issue
20 part 1: goal <= 10 ms added per event).

    python -m benchmarks.bench_live_path [--events 1000] [--interval 0.005] [--busy 8]
                                         [--profile FILE]

The agent is ``benchmarks/_stamp_cli.py``, a stand-in for Claude Code's stream-json mode driven by
the real ``claude-code`` adapter inside a ``corral serve`` child (127.0.0.1, temporary
``CORRAL_HOME``; the adapter's binary is redirected by ``benchmarks._serve_targets``). For one
prompt it prints ``--events`` text deltas ``--interval`` seconds apart, each carrying
``time.monotonic_ns()`` taken just before its line is written. The observer, a raw-socket SSE
reader in this process, takes the same clock (CLOCK_MONOTONIC, shared by every process of the
machine) when it reads the ``text.delta`` envelope, so receive − send is the whole live path:
the pipe, corral's line framing, the stream-json parser, the session layer (numbering,
redaction, the SQLite group commit that precedes publishing), the hub and the SSE write.

The anchor runs in the same run and at the same time: the same stand-in spawned by this process
and read straight from its stdout pipe (no corral), so the machine's own scheduling delay shows in
it as much as in corral's figure. Two scenarios: ``idle`` (the anchor and one session) and
``busy`` (the same with ``--busy`` more sessions streaming alike). Printed: p50 / p99 / max of
receive − send per event; the part of it before the session layer numbered the event (the
envelope's ``ts``, a wall clock, brought to the monotonic one by an offset read in the observer:
the pipe, framing, parser and redaction; the rest is the store's group commit, the hub and the SSE
write); corral's added p50 and p99 over the anchor; the service's CPU per event (its writer's
process included); and whether every delta arrived.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import math
import os
import re
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

from . import _stamp_cli
from ._bytecode import as_installed
from ._serve_session import HEADERS, ServeChild, serve_child, sse_events
from .bench_serve_scale import _cpu_s, _py_spy, _thread_cpu_s, _writer_cpu_s

STAMP = re.compile(rb"\[t=(\d+)\]")
TS = re.compile(rb'"ts":"([^"]+)"')
GOAL_ADDED_MS = 10.0


@dataclass(frozen=True)
class Stats:
    n: int
    p50_ms: float
    p99_ms: float
    max_ms: float


def percentile(ordered: Sequence[float], q: float) -> float:
    """The nearest-rank ``q`` quantile (0 < q <= 1) of an ascending, non-empty sequence."""
    if not ordered:
        raise ValueError("no values")
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def latency_stats(latencies_ns: Sequence[int]) -> Stats:
    """p50, p99 and max of receive − send, in milliseconds."""
    ordered = sorted(v / 1e6 for v in latencies_ns)
    return Stats(len(ordered), percentile(ordered, 0.5), percentile(ordered, 0.99), ordered[-1])


def envelope_ts_ns(data: bytes) -> int | None:
    """The envelope's ``ts`` (wall clock, set by the session layer when it numbers the event) in
    nanoseconds since the epoch; ``None`` without one."""
    m = TS.search(data)
    if m is None:
        return None
    when = datetime.datetime.fromisoformat(m.group(1).decode())
    return int(when.timestamp()) * 1_000_000_000 + when.microsecond * 1000


def latencies(data: bytes, received_ns: int) -> list[int]:
    """receive − send of each stamp in one envelope (or stdout line). An envelope carries its
    stamp twice, in the event's text and in the vendor line it keeps as ``raw``: counted once."""
    return [received_ns - sent for sent in sorted({int(m) for m in STAMP.findall(data)})]


async def bare_pipe(argv: Sequence[str], env: dict[str, str], go: asyncio.Event) -> list[int]:
    """The anchor: the stand-in's stdout read here, one line at a time."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        limit=1 << 20,
    )
    assert proc.stdin is not None and proc.stdout is not None
    found: list[int] = []
    try:
        await go.wait()
        user = {"type": "user", "message": {"role": "user", "content": "go"}}
        proc.stdin.write(json.dumps(user).encode() + b"\n")
        await proc.stdin.drain()
        while line := await proc.stdout.readline():
            found += latencies(line, time.monotonic_ns())
            if line.startswith(b'{"type": "result"'):
                break
    finally:
        proc.stdin.close()
        await asyncio.wait_for(proc.wait(), 10)
    return found


async def corral_session(
    api: httpx.AsyncClient, child: ServeChild, repo: Path, ready: asyncio.Event, go: asyncio.Event
) -> tuple[list[int], list[int]]:
    """One ``claude-code`` session of the stand-in, followed over SSE: its deltas' latencies, and
    of each the part before the session layer numbered it (the envelope's ``ts``, a wall clock
    taken back to the monotonic one through an offset read here)."""
    offset = time.time_ns() - time.monotonic_ns()
    created = await api.post("/api/sessions", json={"adapter_id": "claude-code", "cwd": str(repo)})
    if created.status_code != 201:
        raise RuntimeError(f"session refused: {created.status_code} {created.text[:300]}")
    sid = str(created.json()["id"])
    found: list[int] = []
    to_envelope: list[int] = []
    events = sse_events(child.port, sid)
    try:
        async for kind, _, _ in events:
            if kind == b"session.started":
                break
        ready.set()
        await go.wait()
        (await api.post(f"/api/sessions/{sid}/prompts", json={"text": "go"})).raise_for_status()
        async for kind, data, at in events:
            if kind == b"text.delta":
                got = latencies(data, at)
                found += got
                ts = envelope_ts_ns(data)
                if len(got) == 1 and ts is not None:
                    to_envelope.append(ts - offset - (at - got[0]))
            elif kind in (b"turn.completed", b"session.ended"):
                break
    finally:
        await events.aclose()
        await api.post(f"/api/sessions/{sid}/kill", json={})
    return found, to_envelope


async def scenario(
    child: ServeChild,
    cli: Sequence[str],
    env: dict[str, str],
    repo: Path,
    busy: int,
    timeout: float,
    profile: str | None = None,
) -> dict[str, object]:
    go = asyncio.Event()
    readies = [asyncio.Event() for _ in range(busy + 1)]
    # a connection idle longer than the service's keep-alive (uvicorn: 5 s; a scenario streams
    # for 5 s) may be closed by it just as the kill goes out on it: drop idle ones sooner
    limits = httpx.Limits(max_connections=busy + 4, keepalive_expiry=2.0)
    async with httpx.AsyncClient(
        base_url=child.base_url, headers=HEADERS, timeout=timeout, limits=limits
    ) as api:
        sessions = [
            asyncio.create_task(corral_session(api, child, repo, ready, go)) for ready in readies
        ]
        anchor = asyncio.create_task(bare_pipe(cli, env, go))
        await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), timeout)
        spy = _py_spy(profile, child.pid) if profile else None
        cpu0, threads0, t0 = _cpu_s(child.pid), _thread_cpu_s(child.pid), time.monotonic()
        writer0 = _writer_cpu_s(child.pid)
        go.set()
        (measured, split), *rest = await asyncio.wait_for(asyncio.gather(*sessions), timeout)
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(60)
        others = [found for found, _ in rest]
        bare = await asyncio.wait_for(anchor, timeout)
        cpu, wall = _cpu_s(child.pid) - cpu0, time.monotonic() - t0
        threads = {k: v - threads0.get(k, 0.0) for k, v in _thread_cpu_s(child.pid).items()}
        writer = _writer_cpu_s(child.pid) - writer0
    seen = len(measured) + sum(len(o) for o in others)
    return {
        "busy": busy,
        "bare": latency_stats(bare),
        "corral": latency_stats(measured),
        "to_envelope": latency_stats(split) if split else None,
        "all_sessions": latency_stats([v for s in (measured, *others) for v in s]),
        "complete": all(len(s) == int(env[_stamp_cli.EVENTS_ENV]) for s in (measured, *others)),
        "events": seen,
        "events_per_s": seen / wall,
        "cpu_per_event_us": (cpu + writer) / max(1, seen) * 1e6,
        "writer_cpu_per_event_us": writer / max(1, seen) * 1e6,
        "loop_cpu_per_event_us": threads.get("main", 0.0) / max(1, seen) * 1e6,
    }


def run(args: argparse.Namespace) -> list[dict[str, object]]:
    config = {_stamp_cli.EVENTS_ENV: str(args.events), _stamp_cli.INTERVAL_ENV: str(args.interval)}
    with tempfile.TemporaryDirectory(prefix="corral-live-") as tmp:
        root = Path(tmp)
        repo = root / "project"
        repo.mkdir()
        cli = root / "stamp-cli"
        cli.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{_stamp_cli.__file__}" "$@"\n')
        cli.chmod(0o755)
        targets = {"claude-code": {"binary": str(cli), "env": config, "argv": []}}
        env = {**os.environ, **config}
        with serve_child(root, targets) as child:
            return [
                asyncio.run(
                    scenario(
                        child,
                        [str(cli)],
                        env,
                        repo,
                        busy,
                        args.timeout,
                        f"{args.profile}.{'busy' if busy else 'idle'}" if args.profile else None,
                    )
                )
                for busy in (0, args.busy)
            ]


def _line(label: str, s: object) -> str:
    assert isinstance(s, Stats)
    return (
        f"  {label:<28} p50 {s.p50_ms:6.2f}  p99 {s.p99_ms:6.2f}  max {s.max_ms:7.2f} ms  (n={s.n})"
    )


def main(argv: list[str] | None = None) -> int:
    as_installed()  # start-up timed as an install has it: with bytecode (benchmarks._bytecode)
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_live_path")
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--interval", type=float, default=0.005)
    parser.add_argument("--busy", type=int, default=8, help="Other sessions streaming meanwhile.")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument(
        "--profile", help="py-spy the service while each scenario streams (FILE.idle, FILE.busy)"
    )
    args = parser.parse_args(argv)
    load = os.getloadavg()
    ok = True
    for r in run(args):
        bare, ours = r["bare"], r["corral"]
        assert isinstance(bare, Stats) and isinstance(ours, Stats)
        added50, added99 = ours.p50_ms - bare.p50_ms, ours.p99_ms - bare.p99_ms
        print(f"{'idle' if not r['busy'] else 'busy'}: 1 session + {r['busy']} streaming alike")
        print(_line("bare stdout pipe (anchor)", bare))
        print(_line("corral serve → SSE observer", ours))
        if r["to_envelope"] is not None:
            print(_line("  of which stdout → envelope", r["to_envelope"]))
        if r["busy"]:
            print(_line("every session", r["all_sessions"]))
        verdict = "met" if added99 <= GOAL_ADDED_MS else "missed"
        print(
            f"  added by corral: p50 {added50:+.2f} ms, p99 {added99:+.2f} ms (goal ≤ 10) {verdict}"
        )
        print(
            f"  {r['events']} events at {r['events_per_s']:,.0f}/s, service CPU"
            f" {r['cpu_per_event_us']:.0f} µs per event ({r['loop_cpu_per_event_us']:.0f} on the"
            f" event loop's thread, {r['writer_cpu_per_event_us']:.0f} in the writer's process);"
            f" every delta arrived: {r['complete']}"
        )
        ok = ok and bool(r["complete"])
    print(f"load average at the start: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
