"""The top of a py-spy profile: where one thread's samples go, by function.

    python -m benchmarks.spy_top PROFILE [--thread main|others] [--top 30]

``PROFILE`` is what ``bench_serve_scale --profile`` or ``bench_live_path --profile`` wrote (py-spy's
``raw`` format: one collapsed stack per line, ``thread (tid): …;frame;frame N``). It prints the
samples of each thread, then for the chosen one the functions with the most samples of their own
(the frame at the top of the stack) and the most samples in all (anywhere on the stack), as shares
of that thread's samples. With ``--profile-gil`` the shares are of the time a thread held the GIL.
"""

from __future__ import annotations

import argparse
import collections
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass
class Top:
    samples: collections.Counter[str] = field(default_factory=collections.Counter)
    own: collections.Counter[str] = field(default_factory=collections.Counter)
    anywhere: collections.Counter[str] = field(default_factory=collections.Counter)


def _frame(text: str) -> str:
    """``name (path/module.py:12)`` → ``name path/module`` (lines apart, one function one row)."""
    name, _, where = text.partition(" (")
    return f"{name} {where.rsplit(':', 1)[0].removesuffix('.py')}" if where else name


def _thread(head: str) -> str:
    return "main" if "MainThread" in head else "others"


def read(lines: Iterable[str], thread: str) -> Top:
    top = Top()
    for line in lines:
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        head, *frames = stack.split(";")
        name = _thread(head)
        top.samples[name] += n
        if name != thread or not frames:
            continue
        names = [_frame(f) for f in frames]
        top.own[names[-1]] += n
        for f in set(names):
            top.anywhere[f] += n
    return top


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.spy_top")
    parser.add_argument("profile")
    parser.add_argument("--thread", choices=("main", "others"), default="main")
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args(argv)
    with open(args.profile, encoding="utf-8", errors="replace") as f:
        top = read(f, args.thread)
    total = top.samples[args.thread]
    print("samples: " + ", ".join(f"{k} {v}" for k, v in top.samples.most_common()))
    if not total:
        print(f"no samples of thread {args.thread}", file=sys.stderr)
        return 1
    for title, counter in (("own", top.own), ("anywhere on the stack", top.anywhere)):
        print(f"-- {args.thread}: {title}")
        for name, n in counter.most_common(args.top):
            print(f"{n / total:6.1%}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
