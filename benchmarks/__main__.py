"""Run every benchmark: ``python -m benchmarks [--quick]`` (``make bench``)."""

from __future__ import annotations

import argparse
import sys

from . import bench_claude_parse, bench_proxy, bench_webapp, queue_crash, queue_throughput


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--quick", action="store_true", help="Fewer iterations (a smoke run).")
    args = parser.parse_args(argv)
    print("== prompt queue: enqueue→deliver throughput vs raw fsync'd inserts ==")
    queue_throughput.run(n=50 if args.quick else 300)
    print("\n== prompt queue: SIGKILL crash trials ==")
    crash = queue_crash.run(trials=100 if args.quick else 1000)
    print("\n== Claude stream-json: decode + normalize vs claude-agent-sdk's parser ==")
    parse_argv = ["--lines", "20000", "--repeat", "3"] if args.quick else []
    parse = bench_claude_parse.main(parse_argv)
    print("\n== web app: open a 10,000-event transcript in headless Chromium ==")
    web = bench_webapp.run(2_000 if args.quick else 10_000)
    web_failed = web is not None and not web["ok"]
    print("\n== P2 model proxy: corral vs LiteLLM in front of the same scripted upstream ==")
    bench_proxy.run(quick=args.quick)
    return 1 if crash["violations"] or parse or web_failed else 0


if __name__ == "__main__":
    sys.exit(main())
