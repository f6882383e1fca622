"""Run every benchmark: ``python -m benchmarks [--quick]`` (``make bench``)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import bench_board, bench_claude_parse, queue_crash, queue_throughput


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--quick", action="store_true", help="Fewer iterations (a smoke run).")
    parser.add_argument(
        "--bench-board",
        type=Path,
        default=os.environ.get("BENCH_BOARD") or None,
        help="A checkout (or git dir) of the seed-002 board to run P4 against.",
    )
    args = parser.parse_args(argv)
    print("== prompt queue: enqueue→deliver throughput vs raw fsync'd inserts ==")
    queue_throughput.run(n=50 if args.quick else 300)
    print("\n== prompt queue: SIGKILL crash trials ==")
    crash = queue_crash.run(trials=100 if args.quick else 1000)
    print("\n== Claude stream-json: decode + normalize vs claude-agent-sdk's parser ==")
    parse_argv = ["--lines", "20000", "--repeat", "3"] if args.quick else []
    parse = bench_claude_parse.main(parse_argv)
    print("\n== P4 event board: ingestion with 5 SSE viewers, vs the seed-002 board ==")
    board = bench_board.run(n=500 if args.quick else 3000, bench_path=args.bench_board)
    board_goals = board["goals"]
    assert isinstance(board_goals, dict)
    lost = not board_goals["no_event_lost"]
    return 1 if crash["violations"] or parse or lost else 0


if __name__ == "__main__":
    sys.exit(main())
