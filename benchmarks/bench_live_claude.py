"""The live path per event with the real Claude Code CLI (issue 20 part 1, goal <= 10 ms added per
event): the scripted model's send of each text delta to the reader, bare and through corral serve.

    python -m benchmarks.bench_live_claude [--tokens 200] [--delay 0.01] [--rounds 3]

The scripted model server (in this process) streams a reply of ``--tokens`` numbered chunks
(``<0000>``, ``<0001>`` …) ``--delay`` seconds apart, and notes ``time.monotonic_ns()`` just before
it sends each one (its request log's progress hook). The pinned ``claude`` reads it and prints a
``stream_event`` per delta. Per token, rounds alternating:

* bare      ``claude -p --output-format stream-json --include-partial-messages`` read from its
            stdout pipe here: the model's send to the line (the CLI's own streaming; the anchor)
* serve     the same CLI in a ``claude-code`` session of a ``corral serve`` child (redirected as
            ``bench_overhead`` does), one prompt per round, the ``text.delta`` read by an SSE
            observer here

Both clocks are this process's CLOCK_MONOTONIC. corral's added latency per event is serve − bare
at each percentile; ``bench_live_path`` gives the corral-only figure without a CLI's own jitter.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from corral.testing import FakeModelServer

from ._bytecode import as_installed
from ._serve_session import HEADERS, ServeChild, serve_child, sse_events
from .bench_live_path import GOAL_ADDED_MS, Stats, latency_stats
from .bench_overhead import PAIRS, PROMPT, Workspace, bare_argv, prepare

TOKEN = re.compile(rb"<(\d{4})>")
FIRST_DELTA_FRAME = 3
"""``frames_sent`` when the first text delta goes out: message_start, content_block_start, it."""


class SendTimes:
    """Per streaming request of the model server: frame number → monotonic ns before its send."""

    def __init__(self, server: FakeModelServer) -> None:
        self.by_request: dict[int, dict[int, int]] = {}
        self._lock = threading.Lock()
        log = server.requests
        progress = log.progress

        def noted(record: object, frames_sent: int) -> None:
            now = time.monotonic_ns()
            with self._lock:
                self.by_request.setdefault(id(record), {})[frames_sent] = now
            progress(record, frames_sent)  # type: ignore[arg-type]

        log.progress = noted  # type: ignore[method-assign]

    def take(self, tokens: int) -> dict[int, int]:
        """Token number → send time, from the one request of the turn that streamed them all."""
        with self._lock:
            requests, self.by_request = list(self.by_request.values()), {}
        full = [r for r in requests if FIRST_DELTA_FRAME + tokens - 1 in r]
        if len(full) != 1:
            raise RuntimeError(f"{len(full)} model requests streamed the whole reply, not 1")
        frames = full[0]
        return {k: frames[FIRST_DELTA_FRAME + k] for k in range(tokens)}


def token_latencies(found: list[tuple[int, int]], sent: dict[int, int]) -> list[int]:
    """receive − send per token, each token counted once (its first sighting)."""
    first: dict[int, int] = {}
    for token, at in found:
        first.setdefault(token, at)
    return [at - sent[token] for token, at in first.items() if token in sent]


def bare_round(ws: Workspace, timeout: float) -> list[tuple[int, int]]:
    pair = PAIRS[0]
    argv = bare_argv(pair, ws.binary, ws.argv)
    argv.insert(-1, "--include-partial-messages")
    proc = subprocess.Popen(
        argv,
        env=ws.env,
        cwd=ws.repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    found: list[tuple[int, int]] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        if b'"text_delta"' in line:
            now = time.monotonic_ns()
            found += [(int(m), now) for m in TOKEN.findall(line)]
    proc.wait(timeout)
    return found


SEQ = re.compile(rb'"seq":(\d+)')


async def serve_round(
    child: ServeChild, sid: str, after: int, timeout: float
) -> tuple[list[tuple[int, int]], int]:
    """One prompt to session ``sid``: its tokens as read, and the last ``seq`` seen."""
    found: list[tuple[int, int]] = []
    events = sse_events(child.port, sid, after)
    async with httpx.AsyncClient(base_url=child.base_url, headers=HEADERS, timeout=30) as api:
        try:
            async with asyncio.timeout(timeout):
                async for kind, _, _ in events:
                    if kind == b"":  # attached: nothing the prompt causes is missed or replayed
                        break
                posted = await api.post(f"/api/sessions/{sid}/prompts", json={"text": PROMPT})
                posted.raise_for_status()
                async for kind, data, at in events:
                    if m := SEQ.search(data):
                        after = max(after, int(m.group(1)))
                    if kind == b"text.delta":
                        found += [(int(t), at) for t in set(TOKEN.findall(data))]
                    elif kind == b"turn.completed":
                        break
        finally:
            await events.aclose()
    return found, after


def run(args: argparse.Namespace) -> dict[str, Stats]:
    reply = "".join(f"<{k:04d}>" for k in range(args.tokens))
    script = {"default": {"text": reply, "chunks": args.tokens, "chunk_delay": args.delay}}
    bare: list[int] = []
    served: list[int] = []
    with (
        FakeModelServer(script) as model,
        tempfile.TemporaryDirectory(prefix="corral-live-claude-") as tmp,
    ):
        times = SendTimes(model)
        root = Path(tmp)
        ws = prepare(PAIRS[0], model, root / "claude-code")
        if ws is None:
            raise SystemExit(
                "the pinned claude CLI is not installed (corral agents install claude)"
            )
        with serve_child(root, {"claude-code": ws.serve_target()}) as child:
            body = {"adapter_id": "claude-code", "cwd": str(ws.repo), "model": "fake-model"}
            created = httpx.post(
                f"{child.base_url}/api/sessions", json=body, headers=HEADERS, timeout=60
            )
            created.raise_for_status()
            sid = str(created.json()["id"])
            bare_round(ws, args.timeout)  # warm-ups, untimed
            times.take(args.tokens)
            _, seq = asyncio.run(serve_round(child, sid, 0, args.timeout))
            times.take(args.tokens)
            for _ in range(args.rounds):
                found = bare_round(ws, args.timeout)
                bare += token_latencies(found, times.take(args.tokens))
                found, seq = asyncio.run(serve_round(child, sid, seq, args.timeout))
                served += token_latencies(found, times.take(args.tokens))
    return {"bare": latency_stats(bare), "serve": latency_stats(served)}


def main(argv: list[str] | None = None) -> int:
    as_installed()  # start-up timed as an install has it: with bytecode (benchmarks._bytecode)
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_live_claude")
    parser.add_argument("--tokens", type=int, default=200)
    parser.add_argument("--delay", type=float, default=0.01)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args(argv)
    load = os.getloadavg()
    r = run(args)
    for label, s in (
        ("bare claude stdout", r["bare"]),
        ("claude in corral serve → SSE", r["serve"]),
    ):
        print(
            f"  {label:<30} p50 {s.p50_ms:6.2f}  p99 {s.p99_ms:6.2f}  max {s.max_ms:7.2f} ms"
            f"  (n={s.n})"
        )
    added50 = r["serve"].p50_ms - r["bare"].p50_ms
    added99 = r["serve"].p99_ms - r["bare"].p99_ms
    verdict = "met" if added99 <= GOAL_ADDED_MS else "missed"
    print(f"  added by corral: p50 {added50:+.2f} ms, p99 {added99:+.2f} ms (goal ≤ 10) {verdict}")
    expected = args.tokens * args.rounds
    print(f"  tokens seen: bare {r['bare'].n}, serve {r['serve'].n} of {expected} each")
    print(f"load average at the start: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}")
    return 0 if r["bare"].n == expected and r["serve"].n == expected else 1


if __name__ == "__main__":
    sys.exit(main())
