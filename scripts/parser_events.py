"""Every event every parser makes of every recorded transcript (and of mutated lines), as JSON lines.

    python scripts/parser_events.py OUT.jsonl            # write the snapshot
    python scripts/parser_events.py OUT.jsonl --compare BEFORE.jsonl

Made for changes that must not change what a parser says (issue 20's parser speed-ups): snapshot
on the old code, again on the new, and compare. For each protocol of ``corral.testing.fuzz``, each
recorded transcript is fed the way the drivers feed it (``loads`` then the parser's entry point,
the lines we sent through ``feed_sent``), then ``finish()``; every event is written with its type
and every field, ``raw`` included, followed by the parser's public attributes. Then, with a fixed
seed, every out line of every transcript is mutated once per mutation kind and fed to a parser
primed with the lines before it, so the error paths are compared too.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any

import msgspec

from corral.testing.fuzz import MUTATIONS, TARGETS, feed_line, mutate, primed_parser, recordings

ROOT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "transcripts"
_encode = msgspec.json.Encoder().encode


def _line(kind: str, where: str, value: Any) -> bytes:
    try:
        body = _encode(value)
    except Exception as exc:  # an unencodable event is itself a difference worth seeing
        body = _encode(f"<unencodable {type(value).__name__}: {exc}>")
    return b"%s\t%s\t%s\n" % (kind.encode(), where.encode("utf-8", "replace"), body)


def _state(parser: Any) -> dict[str, Any]:
    out = {}
    for name, value in sorted(vars(parser).items()):
        if name.startswith("_"):
            continue
        try:
            _encode(value)
        except Exception:
            value = repr(value)
        out[name] = value
    return out


def _events(events: list[Any]) -> list[Any]:
    return [[type(e).__name__, e] for e in events]


def snapshot(out: Any, mutations: bool) -> None:
    rng = random.Random(20)
    for target in TARGETS.values():
        for rec in recordings(target, ROOT):
            where = f"{target.name}:{rec.path.relative_to(ROOT)}"
            parser = target.make_parser()
            for index, (direction, line) in enumerate(rec.entries):
                if direction == "out":
                    events = feed_line(target, parser, _encode(line))
                else:
                    events = target.feed_sent(parser, line)
                out.write(_line(direction, f"{where}#{index}", _events(events)))
            finish = getattr(parser, "finish", None)
            if finish is not None:
                out.write(_line("finish", where, _events(finish())))
            out.write(_line("state", where, _state(parser)))
            if not mutations:
                continue
            for index, (direction, line) in enumerate(rec.entries):
                if direction != "out":
                    continue
                for kind in MUTATIONS:
                    data = mutate(line, kind, rng)
                    primed = primed_parser(target, rec, index)
                    events = feed_line(target, primed, data)
                    out.write(_line(kind, f"{where}#{index}", _events(events)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/parser_events.py")
    parser.add_argument("out", type=Path)
    parser.add_argument(
        "--compare", type=Path, help="a snapshot to compare with; exit 1 on a difference"
    )
    parser.add_argument("--no-mutations", action="store_true")
    args = parser.parse_args(argv)
    with args.out.open("wb") as out:
        snapshot(out, not args.no_mutations)
    if args.compare is None:
        return 0
    new = args.out.read_bytes().splitlines()
    old = args.compare.read_bytes().splitlines()
    differences = [(i, a, b) for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b]
    if len(old) != len(new):
        print(f"{len(old)} lines before, {len(new)} after")
    for i, a, b in differences[:20]:
        print(f"line {i}:\n  before {a[:600]!r}\n  after  {b[:600]!r}")
    print(f"{len(new)} lines, {len(differences)} differ")
    return 1 if differences or len(old) != len(new) else 0


if __name__ == "__main__":
    sys.exit(main())
