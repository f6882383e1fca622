"""P3: ``corral launch X`` against the bare CLI, in the same run, for claude, codex, gemini, opencode.

    python -m benchmarks.bench_launch [--repeat 5] [--agents claude,codex]

Two commands per harness, each timed as wall clock (median of ``--repeat`` runs, corral and bare
alternating so that machine load hits both alike):

* ``--version``: ``corral launch X -- --version`` vs ``X --version``.
* one-shot: ``corral launch X custom -t <its own wire> --api-base <scripted model> -m fake-model
  --home H -p hi`` (a native provider: no proxy) vs the CLI run bare with the very arguments and
  environment that launch resolves to (read from its ``--dry-run`` plan).

"Bare" is the CLI as installed, what a user types (``locate(X)``). Where the plan runs another
executable — codex's native binary instead of its npm wrapper (decision 038) — an extra row,
not counted against the goal, compares corral with that executable run bare: corral's own cost.

Targets: wall ratio ≤ 1.10 and added time ≤ 50 ms (on the median wall times). Each row also
prints the best wall time of each side and the median CPU time (user + system of the process
and the children it waited for), which load on a shared machine inflates less than wall time.
The floor rows: ``python -c pass`` (the interpreter any Python launcher pays before its first
line), ``corral --version`` (the Typer CLI's start-up, which ``corral launch`` skips) and
``corral launch claude -p hi`` with ``/bin/true`` installed as ``claude`` (corral's own cost,
without a harness's noise).
corral runs through the installed ``corral`` script (what a user types), else ``python -m corral``.

``--stamp`` adds, per row, the measure that a harness's own spread cannot blur: the CLI
behind a small bash wrapper (in the place of the pinned binary, in a copy of its install's
layout) that notes
``$EPOCHREALTIME`` and its argv/environment, then ``exec``s the real CLI. Bare and corral run the
same wrapper, so "to exec" is how long after the benchmark spawned the command the harness
started — for corral, its whole share (``corral launch`` ``execve``s into the harness) — and the
argv and environment the harness got are compared between the two sides.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from corral._redact import MARK
from corral.agents import agents_root, locate
from corral.agents._layout import MARKER
from corral.testing import FakeModelServer

from ._bytecode import as_installed
from ._command import corral_command

AGENTS = ("claude", "codex", "gemini", "opencode")
WIRE = {
    "claude": "anthropic",
    "codex": "openai-responses",
    "gemini": "google",
    "opencode": "openai-chat",
}
CORRAL = corral_command()
# the harness's own flags a one-shot needs in a scratch directory (no git repo, not trusted)
ONE_SHOT_ARGS = {"codex": ("--", "--skip-git-repo-check"), "gemini": ("--", "--skip-trust")}
TIMEOUT = 180.0
API_KEY = "corral-bench-key"  # any key: the scripted model checks none


def _env(home: Path) -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env["CORRAL_HOME"] = str(home / "corral-home")
    env["CORRAL_AGENTS_DIR"] = str(agents_root())
    return env


Timing = tuple[float, float]
"""(wall seconds, CPU seconds)"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time(argv: list[str], env: dict[str, str], cwd: Path) -> Timing:
    cpu = _children_cpu()
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
    cpu = _children_cpu() - cpu
    if done.returncode != 0:
        tail = done.stderr.decode(errors="replace")[-800:]
        raise RuntimeError(f"{argv[:6]} exited {done.returncode}: {tail}")
    return took, cpu


class Sample:
    """Repeated timings of one command: median and best wall, median CPU (seconds)."""

    def __init__(self, runs: list[Timing]) -> None:
        self.wall = statistics.median(r[0] for r in runs)
        self.best = min(r[0] for r in runs)
        self.cpu = statistics.median(r[1] for r in runs)


def _pair(
    corral: list[str],
    bare: list[str],
    corral_env: dict[str, str],
    bare_env: dict[str, str],
    cwd: Path,
    repeat: int,
) -> tuple[Sample, Sample]:
    c, b = _alternate(
        lambda: _time(corral, corral_env, cwd), lambda: _time(bare, bare_env, cwd), repeat
    )
    return Sample(c), Sample(b)


T = TypeVar("T")


def _alternate(
    corral: Callable[[], T], bare: Callable[[], T], repeat: int
) -> tuple[list[T], list[T]]:
    """One untimed run of each (it warms the page cache for both, and writes the plan's files),
    then ``repeat`` runs of each, bare and corral alternating: (corral's, bare's)."""
    corral()
    bare()
    c, b = [], []
    for _ in range(repeat):
        b.append(bare())
        c.append(corral())
    return c, b


_WRAPPER = """#!/bin/bash
printf '%s\\n' "$EPOCHREALTIME" >> {stamps}
printf '%s\\0' "$@" > {argv}
export -p > {env}
exec {real} "$@"
"""


class Stamped:
    """A wrapper that notes when and how it was started, then becomes ``real``.

    Where ``real`` is a pinned install, the wrapper takes its place in a copy of that install's
    layout (its marker copied), so that corral finds it as it finds the pinned CLI; ``hide`` is
    the environment that points corral (and ``PATH``) at it."""

    def __init__(self, root: Path, name: str, real: Path) -> None:
        self.dir = root / f"stamp-{name}"
        self.dir.mkdir()
        self.stamps, self.argv, self.env = (self.dir / n for n in ("stamps", "argv", "env"))
        try:
            rel = real.relative_to(agents_root())
        except ValueError:
            rel = None
        if rel is not None:
            agents = self.dir / "agents"
            wrapper = agents / rel
            install = rel.parts[0], rel.parts[1]  # <name>/<version>
            (agents.joinpath(*install)).mkdir(parents=True)
            marker = agents_root().joinpath(*install, MARKER)
            agents.joinpath(*install, MARKER).write_bytes(marker.read_bytes())
            wrapper.parent.mkdir(parents=True, exist_ok=True)
            self.hide = {"CORRAL_AGENTS_DIR": str(agents)}
        else:
            wrapper = self.dir / "bin" / name
            wrapper.parent.mkdir()
            self.hide = {
                "PATH": f"{wrapper.parent}{os.pathsep}{os.environ.get('PATH', '')}",
                "CORRAL_AGENTS_DIR": str(root / "no-agents"),
            }
        wrapper.write_text(
            _WRAPPER.format(
                stamps=shlex.quote(str(self.stamps)),
                argv=shlex.quote(str(self.argv)),
                env=shlex.quote(str(self.env)),
                real=shlex.quote(str(real)),
            )
        )
        wrapper.chmod(0o755)
        self.wrapper = wrapper

    def run(self, argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, bytes, bytes]:
        """(seconds from spawn to the harness's start, its argv, its environment)."""
        self.stamps.unlink(missing_ok=True)
        spawned = time.time()
        _time(argv, env, cwd)
        started = float(self.stamps.read_text().split()[-1])  # the last start is the exec
        return started - spawned, self.argv.read_bytes(), self.env.read_bytes()


def _stamped_pair(
    stamped: Stamped,
    corral: list[str],
    bare: list[str],
    corral_env: dict[str, str],
    bare_env: dict[str, str],
    cwd: Path,
    repeat: int,
) -> dict[str, object]:
    runs_c, runs_b = _alternate(
        lambda: stamped.run(corral, corral_env, cwd),
        lambda: stamped.run(bare, bare_env, cwd),
        repeat,
    )
    b, c = [r[0] for r in runs_b], [r[0] for r in runs_c]
    same = all(rb[1:] == rc[1:] for rb, rc in zip(runs_b, runs_c, strict=True))
    bare_ms, corral_ms = _ms(statistics.median(b)), _ms(statistics.median(c))
    added = corral_ms - bare_ms
    print(
        f"{'':<20} to exec   bare {bare_ms:5.1f} ms  corral {corral_ms:5.1f} ms  "
        f"added {added:+5.1f} ms  {'PASS' if added <= 50 else 'FAIL'}  "
        f"(best {_ms(min(b)):.1f}/{_ms(min(c)):.1f}; same argv and environment: {same})"
    )
    return {
        "exec_bare_ms": bare_ms,
        "exec_corral_ms": corral_ms,
        "exec_added_ms": added,
        "same_argv_env": same,
    }


def _ms(seconds: float) -> float:
    return seconds * 1000


def _row(name: str, corral: Sample, bare: Sample, goal: bool = True) -> dict[str, object]:
    ratio = corral.wall / bare.wall
    added = _ms(corral.wall - bare.wall)
    ok = ratio <= 1.10 and added <= 50
    verdict = ("PASS" if ok else "FAIL") if goal else "info"
    print(
        f"{name:<20} bare {_ms(bare.wall):7.0f} ms  corral {_ms(corral.wall):7.0f} ms  "
        f"ratio {ratio:5.2f}  added {added:+6.0f} ms  {verdict}  "
        f"| best {_ms(bare.best):.0f}/{_ms(corral.best):.0f} ms ({_ms(corral.best - bare.best):+.0f})"
        f"  cpu {_ms(bare.cpu):.0f}/{_ms(corral.cpu):.0f} ms ({_ms(corral.cpu - bare.cpu):+.0f})"
    )
    return {
        "name": name,
        "bare_ms": _ms(bare.wall),
        "corral_ms": _ms(corral.wall),
        "ratio": ratio,
        "added_ms": added,
        "best_added_ms": _ms(corral.best - bare.best),
        "cpu_added_ms": _ms(corral.cpu - bare.cpu),
        "pass": ok,
        "goal": goal,
    }


def _planned_command(agent: str, env: dict[str, str]) -> str:
    """What ``corral launch AGENT`` executes (its ``--dry-run`` plan's command)."""
    done = subprocess.run(
        [*CORRAL, "launch", agent, "--dry-run"],
        env=env,
        capture_output=True,
        check=True,
        timeout=60,
    )
    command: str = json.loads(done.stdout)["command"]
    return command


def _floor(name: str, argv: list[str], env: dict[str, str], cwd: Path, repeat: int) -> Sample:
    _time(argv, env, cwd)
    sample = Sample([_time(argv, env, cwd) for _ in range(repeat)])
    print(
        f"{name:<20} {_ms(sample.wall):7.0f} ms  (best {_ms(sample.best):.0f} ms, "
        f"cpu {_ms(sample.cpu):.0f} ms)"
    )
    return sample


def main(argv: list[str] | None = None) -> int:
    as_installed()  # start-up timed as an install has it: with bytecode (benchmarks._bytecode)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--agents", default=",".join(AGENTS))
    ap.add_argument("--json", action="store_true", help="Also print the rows as JSON.")
    ap.add_argument(
        "--stamp",
        action="store_true",
        help="Also time each one-shot to the harness's exec, through a stamping wrapper.",
    )
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="corral-bench-launch-") as tmp:
        root = Path(tmp)
        env = _env(root)
        print(
            f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} CPUs"
        )
        floors = {
            "python -c pass": _floor(
                "python -c pass", [sys.executable, "-c", "pass"], env, root, args.repeat
            ),
            "corral --version": _floor(
                "corral --version", [*CORRAL, "--version"], env, root, args.repeat
            ),
        }
        # corral's own cost, without a harness's noise: /bin/true installed as "claude"
        noop = root / "noop-bin"
        noop.mkdir()
        (noop / "claude").symlink_to("/bin/true")
        noop_env = env | {
            "PATH": f"{noop}{os.pathsep}{env.get('PATH', '')}",
            "CORRAL_AGENTS_DIR": str(root / "no-agents"),
        }
        floors["launch, no-op harness"] = _floor(
            "launch → /bin/true",
            [*CORRAL, "launch", "claude", "-p", "hi"],
            noop_env,
            root,
            args.repeat,
        )
        with FakeModelServer("text") as fake:
            for agent in args.agents.split(","):
                binary = locate(agent)
                if binary is None:
                    print(f"{agent:<20} not installed, skipped")
                    continue
                c, b = _pair(
                    [*CORRAL, "launch", agent, "--", "--version"],
                    [str(binary), "--version"],
                    env,
                    env,
                    root,
                    args.repeat,
                )
                rows.append(_row(f"{agent} --version", c, b))
                executable = _planned_command(agent, env)
                stamped = None
                if args.stamp and executable == str(binary):
                    stamped = Stamped(root, agent, binary)
                    stamp_env = env | stamped.hide
                    rows[-1] |= _stamped_pair(
                        stamped,
                        [*CORRAL, "launch", agent, "--", "--version"],
                        [str(stamped.wrapper), "--version"],
                        stamp_env,
                        stamp_env,
                        root,
                        args.repeat,
                    )
                if executable != str(binary):
                    print(f"{'':<20} (corral runs {executable})")
                    c, b = _pair(
                        [*CORRAL, "launch", agent, "--", "--version"],
                        [executable, "--version"],
                        env,
                        env,
                        root,
                        args.repeat,
                    )
                    rows.append(_row("  vs that, bare", c, b, goal=False))
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
                    "--api-key",
                    API_KEY,
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
                bare_env = {k: v for k, v in env.items() if k not in plan["unsetEnv"]}
                # the plan redacts the key; the bare run gets the one corral passes
                bare_env |= {k: v.replace(MARK, API_KEY) for k, v in plan["env"].items()}
                c, b = _pair(
                    [*launch, *tail],
                    [str(binary), *plan["args"]],
                    env,
                    bare_env,
                    root,
                    args.repeat,
                )
                rows.append(_row(f"{agent} -p hi", c, b))
                if stamped is not None:
                    rows[-1] |= _stamped_pair(
                        stamped,
                        [*launch, *tail],
                        [str(stamped.wrapper), *plan["args"]],
                        env | stamped.hide,
                        bare_env | stamped.hide,
                        root,
                        args.repeat,
                    )
        print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        floor_ms = {name: _ms(s.wall) for name, s in floors.items()}
        print(json.dumps({"floor_ms": floor_ms, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
