"""Mutation fuzz of every protocol parser: escapes, unstorable events, and the slowest line.

    python -m benchmarks.bench_fuzz [--lines 1000000] [--protocol NAME ...] [--seed 1]

For each protocol (``corral.testing.fuzz.TARGETS``) the recorded transcripts are replayed into a
fresh parser, one recording after another, and every other line the CLI printed is replaced by a
mutation of it (truncated, wrong JSON types, ``null`` everywhere, 1,000–2,000-deep nesting, bad ids,
invalid UTF-8, lone surrogate escapes), until ``--lines`` mutated lines were fed. Each mutated line
goes through the drivers' path (``loads`` then the parser) and its events through the store's codec.

Reported per protocol: **escapes** (an exception left the parser; goal 0), **unstorable** events
(the store could not encode one or read it back as its type; goal 0), how many lines hit the
parsers' safety net (``parse_error`` / ``invalid_event``), throughput, and the slowest line with its
mutation (the 20 slowest lines are fed again to a fresh parser, best of 5, so a pause of a shared
machine is not reported as a slow line). The
anchor is the same replay with the recorded lines unmutated, timed in the same run: the ratio says
what broken input costs next to good input.
"""

from __future__ import annotations

import argparse
import heapq
import logging
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from corral.testing import fuzz

ROOT = Path(__file__).resolve().parents[1]
TRANSCRIPTS = ROOT / "tests" / "fixtures" / "transcripts"


@dataclass
class Report:
    lines: int = 0
    escapes: int = 0
    unstorable: int = 0
    safety_net: int = 0
    seconds: float = 0.0
    slowest: float = 0.0
    """The longest a single line took, as measured in the run (includes pauses of the machine)."""
    candidates: list[tuple[float, int, str, bytes]] = field(default_factory=list)
    """The slowest lines seen (a heap), re-timed at the end."""
    examples: dict[str, str] = field(default_factory=dict)
    by_kind: Counter[str] = field(default_factory=Counter)


def fuzz_target(target: fuzz.Target, lines: int, seed: int) -> Report:
    recs = [r for r in fuzz.recordings(target, TRANSCRIPTS) if r.out_lines]
    rng = random.Random(seed)
    report = Report()
    clock = time.perf_counter
    while report.lines < lines:
        rec = rng.choice(recs)
        parser = target.make_parser()
        for direction, line in rec.entries:
            if direction != "out":
                target.feed_sent(parser, line)
                continue
            if rng.random() < 0.5 or report.lines >= lines:
                target.feed(parser, line)
                continue
            kind = rng.choice(fuzz.MUTATIONS)
            data = fuzz.mutate(line, kind, rng)
            started = clock()
            findings = fuzz.check_line(target, parser, data, net=True)
            elapsed = clock() - started
            report.lines += 1
            report.seconds += elapsed
            report.slowest = max(report.slowest, elapsed)
            entry = (elapsed, report.lines, kind, data)
            if len(report.candidates) < 20:
                heapq.heappush(report.candidates, entry)
            elif elapsed > report.candidates[0][0]:
                heapq.heapreplace(report.candidates, entry)
            for finding in findings:
                report.by_kind[finding.kind] += 1
                report.examples.setdefault(finding.kind, f"{finding.detail} ← {data[:160]!r}")
                if finding.kind == "escape":
                    report.escapes += 1
                elif finding.kind == "unstorable":
                    report.unstorable += 1
        if hasattr(parser, "finish"):
            parser.finish()
    return report


def clean_rate(target: fuzz.Target, minimum: int) -> float:
    """Lines per second of the same path (decode, parse, store codec) on unmutated lines."""
    recs = [r for r in fuzz.recordings(target, TRANSCRIPTS) if r.out_lines]
    wire = [(rec, [fuzz._dumps(line) for line in rec.out_lines]) for rec in recs]
    done, seconds = 0, 0.0
    while done < minimum:
        for _rec, datas in wire:
            parser = target.make_parser()
            started = time.perf_counter()
            for data in datas:
                fuzz.check_line(target, parser, data)
            seconds += time.perf_counter() - started
            done += len(datas)
    return done / seconds


def retime(target: fuzz.Target, data: bytes) -> float:
    best = float("inf")
    for _ in range(5):
        parser = target.make_parser()
        started = time.perf_counter()
        fuzz.check_line(target, parser, data)
        best = min(best, time.perf_counter() - started)
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=1_000_000, help="mutated lines per protocol")
    ap.add_argument("--protocol", action="append", choices=sorted(fuzz.TARGETS))
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    logging.getLogger("corral").setLevel(logging.ERROR)  # the safety net logs each line it catches

    failed = False
    print(f"{args.lines:,} mutated lines per protocol, seed {args.seed}")
    print(
        f"  {'protocol':20s} {'escapes':>8s} {'unstorable':>10s} {'net':>7s} "
        f"{'lines/s':>10s} {'vs clean':>8s} {'slowest':>9s}"
    )
    for name in args.protocol or sorted(fuzz.TARGETS):
        target = fuzz.TARGETS[name]
        report = fuzz_target(target, args.lines, args.seed)
        anchor = clean_rate(target, min(args.lines, 20_000))
        rate = report.lines / report.seconds if report.seconds else 0.0
        net = report.by_kind.get("safety_net", 0)
        slowest, kind, data = max(
            (retime(target, data), kind, data) for _, _, kind, data in report.candidates
        )
        print(
            f"  {name:20s} {report.escapes:>8d} {report.unstorable:>10d} {net:>7d} "
            f"{rate:>10,.0f} {rate / anchor:>7.2f}x {slowest * 1000:>7.2f}ms"
        )
        print(
            f"    slowest line: {kind}, {len(data):,} bytes, {slowest * 1000:.2f} ms (best of 5 "
            f"re-runs of the 20 slowest; the longest single measurement in the run was "
            f"{report.slowest * 1000:.1f} ms, machine pauses included)"
        )
        for kind, example in report.examples.items():
            print(f"    first {kind}: {example[:300]}")
        failed = failed or bool(report.escapes or report.unstorable)
    print("goal: 0 escapes, 0 unstorable events —", "MISSED" if failed else "met")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
