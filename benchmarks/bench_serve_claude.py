"""Real Claude Code sessions in one ``corral serve``: corral's own CPU and RSS per session (issue 20
part 3, second half).

    python -m benchmarks.bench_serve_claude [--sessions 20] [--prompts 2]

A ``corral serve`` child on 127.0.0.1 runs ``--sessions`` concurrent ``claude-code`` sessions of
the pinned Claude Code CLI, redirected to the scripted model server (``FakeModelServer``, on
loopback), one SSE observer each; every session gets ``--prompts`` prompts. The figures are of
corral's own processes only (the ``corral serve`` Python process and its database writer's
process, not the ``claude`` children):

* CPU seconds (user + system, all threads) from the first prompt to the last turn's end, per session
  and per turn, next to the CPU of the ``claude`` processes in the same interval (the anchor: the
  agents' own cost);
* RSS of the server before the sessions, with them running and idle, per session;
* every observer saw every turn end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from corral._paths import cache_dir
from corral.redirect import redirect_for
from corral.testing import FakeModelServer

from ._bytecode import as_installed
from .bench_serve_scale import (
    TOKEN,
    Observer,
    _cpu_s,
    _free_port,
    _rss_kib,
    _writer_cpu_s,
    _writer_pids,
    _writers_rss_kib,
    observe,
)

MODEL = "fake-model"
REPLY = "Hello from the scripted model, a few words long so the reply streams in several parts."


def _corral_cpu_s(pid: int) -> float:
    return _cpu_s(pid) + _writer_cpu_s(pid)


def _corral_rss_kib(pid: int) -> int:
    return _rss_kib(pid) + _writers_rss_kib(pid)


def _agents(pid: int) -> list[int]:
    """Every descendant of ``pid`` but its database writer's process (the agents corral started)."""
    writers = set(_writer_pids(pid))
    return [kid for kid in _children(pid) if kid not in writers]


def _children(pid: int) -> list[int]:
    """Every descendant of ``pid``."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        path = Path(f"/proc/{parent}/task/{parent}/children")
        try:
            kids = [int(k) for k in path.read_text().split()]
        except OSError:
            continue
        found += kids
        todo += kids
    return found


def _cpu_tree(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):
            total += _cpu_s(pid)
    return total


def _git_repo(root: Path) -> Path:
    repo = root / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("# bench\n")
    ident = ["-c", "user.name=corral", "-c", "user.email=corral@localhost"]
    for argv in (
        ["init", "-q", "-b", "main"],
        ["add", "README.md"],
        [*ident, "commit", "-qm", "i"],
    ):
        subprocess.run(["git", *argv], cwd=repo, check=True, capture_output=True)
    return repo


def run(args: argparse.Namespace) -> dict[str, Any]:
    port = _free_port()
    agents = os.environ.get("CORRAL_AGENTS_DIR") or str(cache_dir() / "agents")
    with (
        FakeModelServer({"default": {"text": REPLY, "chunks": 8}}) as model,
        tempfile.TemporaryDirectory(prefix="corral-claude-scale-") as tmp,
    ):
        root = Path(tmp)
        home = root / "home"
        home.mkdir()
        repo = _git_repo(root)
        red = redirect_for("claude", base_url=model.base_url, model=MODEL, api_key="t", home=home)
        red.apply()
        env = red.environ({k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")})
        env.update(
            CORRAL_HOME=str(root / "corral-home"),
            CORRAL_TOKEN=TOKEN,
            CORRAL_AGENTS_DIR=agents,
            NO_COLOR="1",
        )
        server = subprocess.Popen(
            [sys.executable, "-m", "corral", "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            return asyncio.run(drive(args, server.pid, port, repo))
        finally:
            server.terminate()
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()


async def drive(args: argparse.Namespace, pid: int, port: int, repo: Path) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=args.timeout
    ) as client:
        for _ in range(400):
            try:
                if (await client.get("/api/health")).status_code == 200:
                    break
            except httpx.TransportError:
                await asyncio.sleep(0.05)
        rss_before = _corral_rss_kib(pid)
        cpu_before_start = _corral_cpu_s(pid)

        async def create() -> str:
            body = {"adapter_id": "claude-code", "cwd": str(repo), "model": MODEL}
            r = await client.post("/api/sessions", json=body)
            if r.status_code != 201:
                raise RuntimeError(f"session refused: {r.status_code} {r.text[:300]}")
            return str(r.json()["id"])

        ids = await asyncio.gather(*(create() for _ in range(args.sessions)))
        start_cpu = _corral_cpu_s(pid) - cpu_before_start
        await asyncio.sleep(1.0)
        rss_idle = _corral_rss_kib(pid)
        observers = [Observer(sid) for sid in ids]
        readies = [asyncio.Event() for _ in observers]
        tasks = [
            asyncio.create_task(observe(port, o, args.prompts, e))
            for o, e in zip(observers, readies, strict=True)
        ]
        await asyncio.gather(*(e.wait() for e in readies))
        agents = _agents(pid)
        cpu0, agents_cpu0, t0 = _corral_cpu_s(pid), _cpu_tree(agents), time.perf_counter()
        for n in range(args.prompts):
            for sid in ids:
                r = await client.post(f"/api/sessions/{sid}/prompts", json={"text": f"p{n}"})
                r.raise_for_status()
        await asyncio.wait_for(asyncio.gather(*tasks), args.timeout)
        wall = time.perf_counter() - t0
        cpu = _corral_cpu_s(pid) - cpu0
        agents_cpu = _cpu_tree(agents) - agents_cpu0
        rss_busy = _corral_rss_kib(pid)
        events = sum(len(o.seqs) for o in observers)
        for sid in ids:
            await client.post(f"/api/sessions/{sid}/kill", json={})
    turns = args.sessions * args.prompts
    return {
        "sessions": args.sessions,
        "agents": len(agents),
        "turns": turns,
        "events": events,
        "wall_s": wall,
        "start_cpu_per_session_ms": start_cpu / args.sessions * 1000,
        "cpu_s": cpu,
        "cpu_per_session_s": cpu / args.sessions,
        "cpu_per_turn_ms": cpu / turns * 1000,
        "cpu_per_event_us": cpu / max(1, events) * 1e6,
        "agents_cpu_s": agents_cpu,
        "rss_per_session_kib": (rss_idle - rss_before) / args.sessions,
        "rss_busy_mib": rss_busy / 1024,
        "rss_before_mib": rss_before / 1024,
        "all_turns_seen": all(o.turns_done >= args.prompts for o in observers),
        "load_average": os.getloadavg()[0],
    }


def main(argv: list[str] | None = None) -> int:
    as_installed()  # start-up timed as an install has it: with bytecode (benchmarks._bytecode)
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_serve_claude")
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--prompts", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args(argv)
    r = run(args)
    print(f"claude-code sessions / agent processes: {r['sessions']} / {r['agents']}")
    print(f"turns / events seen: {r['turns']} / {r['events']} in {r['wall_s']:.1f} s")
    print(f"corral CPU to start a session:  {r['start_cpu_per_session_ms']:.0f} ms")
    print(
        f"corral CPU during the turns:    {r['cpu_s']:.2f} s = {r['cpu_per_session_s']:.3f} s"
        f" per session, {r['cpu_per_turn_ms']:.1f} ms per turn, {r['cpu_per_event_us']:.0f} µs"
        " per event"
    )
    print(f"agents' CPU (anchor):           {r['agents_cpu_s']:.2f} s")
    print(
        f"corral RSS: {r['rss_before_mib']:.0f} MiB before, +{r['rss_per_session_kib']:.0f} KiB"
        f" per running session, {r['rss_busy_mib']:.0f} MiB at the end"
    )
    print(f"every observer saw every turn end: {r['all_turns_seen']}")
    print(f"load average (1 min): {r['load_average']:.1f} on {os.cpu_count()} CPUs")
    return 0 if r["all_turns_seen"] else 1


if __name__ == "__main__":
    sys.exit(main())
