"""Run every benchmark: ``python -m benchmarks [--quick] [--only NAME,…]`` (``make bench``).

Each section prints its own figures as ratios to anchors measured in the same run, and says whether
its goal was met. The exit code is 1 when a section found a correctness failure (a lost or doubled
prompt, an event an observer missed, a parser escape); a missed speed goal is printed, not fatal.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from ._bytecode import as_installed


def _queue_throughput(args: argparse.Namespace) -> bool:
    quick = args.quick
    from . import queue_throughput

    queue_throughput.run(n=50 if quick else 300)
    return False


def _queue_crash(args: argparse.Namespace) -> bool:
    quick = args.quick
    from . import queue_crash

    trials = 100 if quick else 1000
    # on both writers: the library's thread and corral serve's process (decision 051)
    results = [queue_crash.run(trials=trials, writer=writer) for writer in ("thread", "process")]
    return any(result["violations"] for result in results)


def _claude_parse(args: argparse.Namespace) -> bool:
    quick = args.quick
    from . import bench_claude_parse

    return bool(bench_claude_parse.main(["--lines", "20000", "--repeat", "3"] if quick else []))


def _webapp(args: argparse.Namespace) -> bool:
    quick = args.quick
    from . import bench_webapp

    web = bench_webapp.run(2_000 if quick else 10_000)
    return web is not None and not web["ok"]


def _proxy(args: argparse.Namespace) -> bool:
    quick = args.quick
    from . import bench_proxy

    bench_proxy.run(quick=quick)
    return False


def _fuzz(args: argparse.Namespace) -> bool:
    from . import bench_fuzz

    return bool(bench_fuzz.main(["--lines", "20000" if args.quick else "1000000"]))


def _launch(args: argparse.Namespace) -> bool:
    quick = args.quick
    from . import bench_launch

    bench_launch.main(["--repeat", "2" if quick else "5", "--stamp"])
    return False


def _board(args: argparse.Namespace) -> bool:
    from . import bench_board

    board = bench_board.run(n=500 if args.quick else 3000, bench_path=args.bench_board)
    goals = board["goals"]
    assert isinstance(goals, dict)
    return not goals["no_event_lost"]


def _parsers(args: argparse.Namespace) -> bool:
    from . import bench_parsers

    return bool(bench_parsers.main(["--lines", "20000", "--repeat", "3"] if args.quick else []))


def _typed_probe(args: argparse.Namespace) -> bool:
    from . import probe_typed_pi

    return bool(probe_typed_pi.main(["--lines", "20000", "--repeat", "3"] if args.quick else []))


def _overhead(args: argparse.Namespace) -> bool:
    from . import bench_overhead

    return bool(bench_overhead.main(["--repeat", "2" if args.quick else "5"]))


def _live_path(args: argparse.Namespace) -> bool:
    from . import bench_live_path

    quick = ["--events", "200", "--busy", "2"] if args.quick else []
    return bool(bench_live_path.main(quick))


def _live_claude(args: argparse.Namespace) -> bool:
    from corral.agents import locate

    from . import bench_live_claude

    if locate("claude") is None:
        print("skipped: the pinned claude CLI is not installed (corral agents install claude)")
        return False
    return bool(bench_live_claude.main(["--rounds", "1"] if args.quick else []))


def _serve_scale(args: argparse.Namespace) -> bool:
    from . import bench_serve_scale

    quick = ["--sessions", "50", "--prompts", "2"] if args.quick else []
    return bool(bench_serve_scale.main(quick))


def _serve_claude(args: argparse.Namespace) -> bool:
    from corral.agents import locate

    from . import bench_serve_claude

    if locate("claude") is None:
        print("skipped: the pinned claude CLI is not installed (corral agents install claude)")
        return False
    quick = ["--sessions", "5", "--prompts", "1"] if args.quick else []
    return bool(bench_serve_claude.main(quick))


def _startup(args: argparse.Namespace) -> bool:
    from . import bench_startup

    quick = ["--runs", "5", "--warmup", "1", "--serve-runs", "2"] if args.quick else []
    return bool(bench_startup.main(quick))


def _external_scan(args: argparse.Namespace) -> bool:
    from . import bench_external_scan

    quick = ["--files", "1000", "--mb", "100"] if args.quick else []
    return bool(bench_external_scan.main(quick))


SECTIONS: dict[str, tuple[str, Callable[[argparse.Namespace], bool]]] = {
    "queue": ("prompt queue: enqueue→deliver throughput vs raw fsync'd inserts", _queue_throughput),
    "crash": ("prompt queue: SIGKILL crash trials", _queue_crash),
    "claude-parse": (
        "Claude stream-json: decode + normalize vs claude-agent-sdk's parser",
        _claude_parse,
    ),
    "webapp": ("web app: open a 10,000-event transcript in headless Chromium", _webapp),
    "proxy": ("P2 model proxy: corral vs LiteLLM in front of the same scripted upstream", _proxy),
    "launch": ("P3 launcher: corral launch X vs the bare CLI", _launch),
    "parsers": ("every protocol parser vs a bare msgspec decode of its transcripts", _parsers),
    "typed-probe": (
        "decision 041's probe: Pi lines decoded into structs, raw as bytes",
        _typed_probe,
    ),
    "overhead": (
        "corral run and a corral serve session vs the bare CLI, per target (one turn)",
        _overhead,
    ),
    "live-path": (
        "per event: an agent's stdout line to a corral serve SSE observer vs a bare pipe",
        _live_path,
    ),
    "live-claude": (
        "per event with the real Claude Code: model send to reader, bare vs in corral serve",
        _live_claude,
    ),
    "startup": ("corral --version / --help / serve ready vs python -c pass", _startup),
    "serve-scale": ("one corral serve, many sessions and SSE observers", _serve_scale),
    "serve-claude": (
        "20 real Claude Code sessions in one corral serve: corral's CPU, RSS",
        _serve_claude,
    ),
    "fuzz": ("protocol parsers: mutation fuzz (escapes, unstorable events, slowest line)", _fuzz),
    "board": ("P4 event board: ingestion with 5 SSE viewers, vs the seed-002 board", _board),
    "external-scan": (
        "P5 external sessions: list 10,000 transcripts (3 GB) cold and warm vs a bare walk",
        _external_scan,
    ),
}


def main(argv: list[str] | None = None) -> int:
    as_installed()  # start-up timed as an install has it: with bytecode (benchmarks._bytecode)
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--quick", action="store_true", help="Fewer iterations (a smoke run).")
    parser.add_argument(
        "--only", default="", help=f"Comma-separated sections: {', '.join(SECTIONS)}"
    )
    parser.add_argument(
        "--bench-board",
        type=Path,
        default=os.environ.get("BENCH_BOARD") or None,
        help="A checkout (or git dir) of the seed-002 board to run P4 against.",
    )
    args = parser.parse_args(argv)
    wanted = [s for s in args.only.split(",") if s] or list(SECTIONS)
    unknown = [s for s in wanted if s not in SECTIONS]
    if unknown:
        parser.error(f"unknown section(s): {', '.join(unknown)}")
    failed = []
    for i, name in enumerate(wanted):
        title, run = SECTIONS[name]
        print(f"{'' if i == 0 else chr(10)}== {title} ==", flush=True)
        if run(args):
            failed.append(name)
    if failed:
        print(f"\ncorrectness failures in: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
