"""Decode + normalize Claude Code stream-json lines: corral against claude-agent-sdk, one run.

    python -m benchmarks.bench_claude_parse [--lines 60000] [--repeat 5]

The transcript is built by repeating the stdout lines of the recorded Claude Code fixtures
(tests/fixtures/transcripts/claude/) until it has at least ``--lines`` lines. Pipelines, all
timed in this process on the same bytes (best of ``--repeat`` runs):

* ``json.loads``                       stdlib decode only (the anchor)
* ``json.loads + sdk.parse_message``   what claude-agent-sdk does with each line
* ``msgspec decode``                   a bare fast decode
* ``orjson.loads``                     another bare fast decode (when orjson is installed)
* ``corral``                           the drivers' ``loads`` (msgspec, with a fallback) +
                                       ``ClaudeStreamParser.feed`` (total, storable events)

claude-agent-sdk is not installed (its wheel bundles a ~400 MB CLI and pulls in ``mcp``): its parser
modules (``types``, ``_errors``, ``_internal/message_parser``, pure Python, stdlib-only at import)
are extracted from the wheel fetched with ``pip download --no-deps`` into corral's cache dir. See
docs/decisions/006-claude-agent-sdk.md.
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from corral._paths import cache_dir
from corral._process._decode import loads
from corral.protocols.claude_stream_json import ClaudeStreamParser

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "transcripts" / "claude"
SDK_VERSION = "0.2.189"
SDK_MODULES = (
    "claude_agent_sdk/_errors.py",
    "claude_agent_sdk/types.py",
    "claude_agent_sdk/_internal/message_parser.py",
)
# Control envelopes are handled by the SDK's query layer, never by parse_message.
SKIP_FOR_SDK = {"control_request", "control_response", "control_cancel_request"}


def transcript_lines(minimum: int) -> list[bytes]:
    base: list[bytes] = []
    for path in sorted(FIXTURES.rglob("*.jsonl")):
        for raw in path.read_text("utf-8").splitlines():
            entry = json.loads(raw)
            line = entry.get("line")
            if (
                entry["dir"] == "out"
                and isinstance(line, dict)
                and line.get("type") not in SKIP_FOR_SDK
            ):
                base.append(json.dumps(line, separators=(",", ":"), ensure_ascii=False).encode())
    if not base:
        raise SystemExit(f"no recorded Claude Code transcripts under {FIXTURES}")
    lines: list[bytes] = []
    while len(lines) < minimum:
        lines.extend(base)
    return lines


def load_sdk_parser() -> Callable[[dict[str, Any]], Any]:
    """claude-agent-sdk's ``parse_message``: installed, or extracted from its wheel."""
    try:
        from claude_agent_sdk._internal.message_parser import parse_message  # type: ignore[import-not-found]

        return parse_message  # type: ignore[no-any-return]
    except ImportError:
        pass
    root = cache_dir() / "bench" / f"claude-agent-sdk-{SDK_VERSION}"
    if not (root / SDK_MODULES[-1]).is_file():
        wheels = root / "wheel"
        wheels.mkdir(parents=True, exist_ok=True)
        if not list(wheels.glob("*.whl")):
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--no-deps",
                    "--quiet",
                    f"claude-agent-sdk=={SDK_VERSION}",
                    "-d",
                    str(wheels),
                ],
                check=True,
            )
        (wheel,) = wheels.glob("*.whl")
        with zipfile.ZipFile(wheel) as zf:
            for name in SDK_MODULES:
                target = root / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(zf.read(name))
        # Empty package markers: the real __init__ imports mcp and jsonschema, which the parser never uses.
        for pkg in ("claude_agent_sdk", "claude_agent_sdk/_internal"):
            (root / pkg / "__init__.py").write_text("")
    sys.path.insert(0, str(root))
    module = importlib.import_module("claude_agent_sdk._internal.message_parser")
    return module.parse_message  # type: ignore[no-any-return]


def interleaved_best(
    repeat: int, pipelines: list[tuple[str, Callable[[], int]]]
) -> dict[str, tuple[float, int]]:
    """Best time of each pipeline over ``repeat`` rounds, the pipelines taking turns in each round,
    so a load spike on a shared machine hits them alike instead of one of them."""
    best: dict[str, tuple[float, int]] = {name: (float("inf"), 0) for name, _ in pipelines}
    for _ in range(repeat):
        for name, fn in pipelines:
            started = time.perf_counter()
            produced = fn()
            elapsed = time.perf_counter() - started
            if elapsed < best[name][0]:
                best[name] = (elapsed, produced)
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=60_000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)

    lines = transcript_lines(args.lines)
    total_bytes = sum(len(line) for line in lines)
    parse_message = load_sdk_parser()
    decode = msgspec.json.Decoder().decode

    def stdlib() -> int:
        return sum(1 for line in lines if json.loads(line))

    def sdk() -> int:
        n = 0
        for line in lines:
            if parse_message(json.loads(line)) is not None:
                n += 1
        return n

    def bare_msgspec() -> int:
        return sum(1 for line in lines if decode(line))

    def corral() -> int:
        parser = ClaudeStreamParser()
        feed = parser.feed
        n = 0
        for line in lines:
            n += len(feed(loads(line)))
        return n

    pipelines: list[tuple[str, Callable[[], int]]] = [
        ("json.loads (anchor)", stdlib),
        ("json.loads + sdk.parse_message", sdk),
        ("msgspec decode", bare_msgspec),
    ]
    try:
        import orjson

        pipelines.append(("orjson.loads", lambda: sum(1 for line in lines if orjson.loads(line))))
    except ImportError:
        print("(orjson not installed: pip install -e '.[bench]' to add it)")
    pipelines.append(("corral decode + normalize", corral))

    print(f"{len(lines)} lines, {total_bytes / 1e6:.1f} MB, best of {args.repeat}")
    results: dict[str, float] = {}
    for name, (seconds, produced) in interleaved_best(args.repeat, pipelines).items():
        results[name] = len(lines) / seconds
        print(f"  {name:34s} {results[name]:>12,.0f} lines/s   ({produced} outputs)")
    anchor = results["json.loads (anchor)"]
    sdk_rate = results["json.loads + sdk.parse_message"]
    corral_rate = results["corral decode + normalize"]
    print("ratios:")
    for name, rate in results.items():
        print(
            f"  {name:34s} {rate / anchor:6.2f}x json.loads   {rate / sdk_rate:6.2f}x sdk pipeline"
        )
    goal = 2.5
    verdict = "meets" if corral_rate / sdk_rate >= goal else "MISSES"
    print(f"corral vs sdk pipeline: {corral_rate / sdk_rate:.2f}x ({verdict} the {goal}x goal)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
