"""Start-up: ``corral --version``, ``corral --help`` and ``corral serve`` ready to answer (issue 20).

    python -m benchmarks.bench_startup [--runs 20] [--warmup 3] [--serve-runs 5]

Hyperfine-style: each command runs ``--warmup`` times unmeasured, then ``--runs`` times; the table
gives mean ± stdev, min and median wall time, the median CPU time (user + system, less sensitive
than wall time to other load on a shared machine), and the median as a ratio to (and milliseconds
above) the anchor ``python -c pass``, timed in the same run, interleaved with corral's runs so that
load on the machine hits both alike. The commands run through the installed ``corral`` script
(what a user types), falling back to ``python -m corral``.

``corral serve`` ready to answer is the wall time from spawning ``corral serve --port 0`` to the
first ``200`` from ``GET /api/health`` (polled every 5 ms over loopback), with a fresh database and
corral home each run.

Goals (issue 20): ``--version`` and ``--help`` <= 80 ms; serve ready < 0.5 s.
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ._bytecode import as_installed
from ._command import corral_command

GOAL_CLI_S = 0.080
GOAL_SERVE_S = 0.5
TIMEOUT = 30.0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one run of ``argv``."""
    cpu0 = _children_cpu()
    t0 = time.perf_counter()
    subprocess.run(
        argv,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=TIMEOUT,
        check=True,
    )
    return time.perf_counter() - t0, _children_cpu() - cpu0


def _serve_ready(env: dict[str, str], root: Path, n: int) -> float:
    home = root / f"serve-{n}"
    home.mkdir()
    run_env = {**env, "CORRAL_HOME": str(home), "CORRAL_TOKEN": "bench"}
    argv = [*corral_command(), "serve", "--port", "0", "--db", str(home / "db.sqlite")]
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        env=run_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline().decode(errors="replace")
        found = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        if found is None:
            raise RuntimeError(f"corral serve printed no URL: {line!r}")
        port = int(found.group(1))
        while time.perf_counter() - t0 < TIMEOUT:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1.0)
            try:
                conn.request("GET", "/api/health")
                if conn.getresponse().status == 200:
                    return time.perf_counter() - t0
            except OSError:
                pass
            finally:
                conn.close()
            time.sleep(0.005)
        raise RuntimeError("corral serve never answered /api/health")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _stats(samples: list[float]) -> str:
    mean = statistics.fmean(samples)
    sd = statistics.stdev(samples) if len(samples) > 1 else 0.0
    return (
        f"{mean * 1000:7.1f} ± {sd * 1000:5.1f} ms  min {min(samples) * 1000:6.1f}"
        f"  median {statistics.median(samples) * 1000:6.1f}"
    )


def main(argv: list[str] | None = None) -> int:
    as_installed()  # start-up timed as an install has it: with bytecode (benchmarks._bytecode)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--serve-runs", type=int, default=5)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="corral-bench-startup-") as tmp:
        root = Path(tmp)
        env = {**os.environ, "CORRAL_HOME": str(root / "home"), "NO_COLOR": "1"}
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "corral --version": [*corral_command(), "--version"],
            "corral --help": [*corral_command(), "--help"],
        }
        samples: dict[str, list[float]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.warmup):
            for argv_ in commands.values():
                _once(argv_, env)
        for _ in range(args.runs):  # interleaved: load on the machine hits every command alike
            for name, argv_ in commands.items():
                wall, used = _once(argv_, env)
                samples[name].append(wall)
                cpu[name].append(used)
        serve = [_serve_ready(env, root, n) for n in range(args.serve_runs)]
    anchor = statistics.median(samples["python -c pass"])
    print(f"{args.runs} runs each after {args.warmup} warm-up, interleaved; {os.cpu_count()} cores")
    for name, values in samples.items():
        med = statistics.median(values)
        extra = (
            ""
            if name == "python -c pass"
            else f"  = {med / anchor:5.1f}x the anchor, +{(med - anchor) * 1000:.0f} ms"
            f"  goal <= {GOAL_CLI_S * 1000:.0f} ms: {'met' if med <= GOAL_CLI_S else 'MISSED'}"
        )
        print(f"{name:<20} {_stats(values)}{extra}")
        print(f"{'':<20} CPU {statistics.median(cpu[name]) * 1000:.1f} ms (median, user + system)")
    med = statistics.median(serve)
    print(
        f"{'corral serve ready':<20} {_stats(serve)}  ({len(serve)} runs, spawn to first 200"
        f" on /api/health)  goal < {GOAL_SERVE_S * 1000:.0f} ms:"
        f" {'met' if med < GOAL_SERVE_S else 'MISSED'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
