"""P3: ``corral launch X`` against the bare CLI, in the same run, for claude, codex, gemini, opencode.

    python -m benchmarks.bench_launch [--repeat 5] [--agents claude,codex]

Two commands per harness, each timed as wall clock (median of ``--repeat`` runs, corral and bare
alternating so that machine load hits both alike):

* ``--version``: ``corral launch X -- --version`` vs ``X --version``.
* one-shot: ``corral launch X custom -t <its own wire> --api-base <scripted model> -m fake-model
  --home H -p hi`` (a native provider: no proxy) vs the very command and environment that launch
  resolves to (read from its ``--dry-run`` plan), run directly.

Targets: wall ratio ≤ 1.10 and added time ≤ 50 ms. A third row, ``corral --version``, is the
floor every ``corral`` command pays (interpreter + CLI start-up) before the launcher runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corral.agents import agents_root, locate
from corral.testing import FakeModelServer

AGENTS = ("claude", "codex", "gemini", "opencode")
WIRE = {
    "claude": "anthropic",
    "codex": "openai-responses",
    "gemini": "google",
    "opencode": "openai-chat",
}
CORRAL = [sys.executable, "-m", "corral"]
# the harness's own flags a one-shot needs in a scratch directory (no git repo, not trusted)
ONE_SHOT_ARGS = {"codex": ("--", "--skip-git-repo-check"), "gemini": ("--", "--skip-trust")}
TIMEOUT = 180.0


def _env(home: Path) -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env["CORRAL_HOME"] = str(home / "corral-home")
    env["CORRAL_AGENTS_DIR"] = str(agents_root())
    return env


def _time(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        argv,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    took = time.perf_counter() - start
    if done.returncode != 0:
        tail = done.stderr.decode(errors="replace")[-800:]
        raise RuntimeError(f"{argv[:6]} exited {done.returncode}: {tail}")
    return took


def _pair(
    corral: list[str],
    bare: list[str],
    corral_env: dict[str, str],
    bare_env: dict[str, str],
    cwd: Path,
    repeat: int,
) -> tuple[float, float]:
    _time(corral, corral_env, cwd)  # warm the page cache for both; writes the plan's files
    _time(bare, bare_env, cwd)
    c, b = [], []
    for _ in range(repeat):
        b.append(_time(bare, bare_env, cwd))
        c.append(_time(corral, corral_env, cwd))
    return statistics.median(c), statistics.median(b)


def _row(name: str, corral: float, bare: float, floor: float) -> dict[str, object]:
    ratio = corral / bare
    added = (corral - bare) * 1000
    ok = ratio <= 1.10 and added <= 50
    own = added - floor * 1000
    print(
        f"{name:<22} bare {bare * 1000:8.0f} ms  corral {corral * 1000:8.0f} ms  "
        f"ratio {ratio:5.2f}  added {added:+7.0f} ms  {'PASS' if ok else 'FAIL'}  "
        f"(beyond the CLI start-up: {own:+.0f} ms)"
    )
    return {
        "name": name,
        "bare_ms": bare * 1000,
        "corral_ms": corral * 1000,
        "ratio": ratio,
        "added_ms": added,
        "pass": ok,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--agents", default=",".join(AGENTS))
    ap.add_argument("--json", action="store_true", help="Also print the rows as JSON.")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="corral-bench-launch-") as tmp:
        root = Path(tmp)
        env = _env(root)
        floor = statistics.median(
            _time([*CORRAL, "--version"], env, root) for _ in range(args.repeat)
        )
        print(
            f"{'corral --version':<22} {floor * 1000:8.0f} ms  (the CLI start-up every corral command pays)"
        )
        with FakeModelServer("text") as fake:
            for agent in args.agents.split(","):
                binary = locate(agent)
                if binary is None:
                    print(f"{agent:<22} not installed, skipped")
                    continue
                c, b = _pair(
                    [*CORRAL, "launch", agent, "--", "--version"],
                    [str(binary), "--version"],
                    env,
                    env,
                    root,
                    args.repeat,
                )
                rows.append(_row(f"{agent} --version", c, b, floor))
                home = root / f"home-{agent}"
                base = fake.base_url + ("/v1" if WIRE[agent].startswith("openai") else "")
                launch = [
                    *CORRAL,
                    "launch",
                    agent,
                    "custom",
                    "-t",
                    WIRE[agent],
                    "--api-base",
                    base,
                    "-m",
                    "fake-model",
                    "--home",
                    str(home),
                    "-p",
                    "hi",
                ]
                tail = list(ONE_SHOT_ARGS.get(agent, ()))
                plan = json.loads(
                    subprocess.run(
                        [*launch, "--dry-run", *tail],
                        env=env,
                        capture_output=True,
                        check=True,
                        timeout=60,
                    ).stdout
                )
                assert plan["proxyNeeded"] is False, plan
                bare_env = {**env, **plan["env"]}
                c, b = _pair(
                    [*launch, *tail],
                    [plan["command"], *plan["args"]],
                    env,
                    bare_env,
                    root,
                    max(3, args.repeat // 2),
                )
                rows.append(_row(f"{agent} -p hi", c, b, floor))
    if args.json:
        print(json.dumps({"floor_ms": floor * 1000, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
