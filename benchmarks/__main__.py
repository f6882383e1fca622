"""Run every benchmark: ``python -m benchmarks [--quick]`` (``make bench``)."""

from __future__ import annotations

import argparse
import sys

from . import bench_claude_parse, bench_fuzz, queue_crash, queue_throughput


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--quick", action="store_true", help="Fewer iterations (a smoke run).")
    parser.add_argument(
        "--fuzz-lines",
        type=int,
        default=None,
        help="Mutated lines per protocol for the parser fuzz (default 1,000,000; 20,000 with --quick).",
    )
    args = parser.parse_args(argv)
    print("== prompt queue: enqueue→deliver throughput vs raw fsync'd inserts ==")
    queue_throughput.run(n=50 if args.quick else 300)
    print("\n== prompt queue: SIGKILL crash trials ==")
    crash = queue_crash.run(trials=100 if args.quick else 1000)
    print("\n== Claude stream-json: decode + normalize vs claude-agent-sdk's parser ==")
    parse_argv = ["--lines", "20000", "--repeat", "3"] if args.quick else []
    parse = bench_claude_parse.main(parse_argv)
    print("\n== protocol parsers: mutation fuzz (escapes, unstorable events, slowest line) ==")
    fuzz_lines = args.fuzz_lines or (20_000 if args.quick else 1_000_000)
    fuzzed = bench_fuzz.main(["--lines", str(fuzz_lines)])
    return 1 if crash["violations"] or parse or fuzzed else 0


if __name__ == "__main__":
    sys.exit(main())
