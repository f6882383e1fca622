"""What corral adds over the bare CLI: one-shot runs, per target, in the same run (issue 20 part 1).

    python -m benchmarks.bench_overhead [--repeat 5] [--only claude-code,pi]
                                        [--write-docs docs/compatibility.md]

For each pair below, the pinned CLI runs one text-only turn against the scripted model server twice
over: once bare, in its own headless mode (the anchor), and once through ``corral run ADAPTER …
--json``, with the same redirection, the same prompt and the same model. Runs alternate (bare,
corral, bare, corral …) so drift on a shared machine falls on both sides. Per run it records:

* first text  seconds from spawn to the first stdout line that carries the scripted reply
* end         seconds from spawn to exit (the turn end, for a one-shot run)
* peak RSS    the high-water mark (VmHWM) of the process we spawned itself: for ``corral run`` that
              is corral's own Python process, not the agent below it; for the bare CLI, the CLI's
* CPU         user + system seconds of the whole process tree (corral and the agent below it),
              which a loaded machine stretches far less than the wall time

and prints medians, the wall ratio corral/bare and the added milliseconds. Goal (issue 20): wall
ratio <= 1.10 and <= 50 ms added. "Time to ready" is not separate for a one-shot run: the CLI is
ready when it starts the turn, so it is inside "first text".

``--write-docs PAGE`` also writes the figures as the ``overhead`` block of the compatibility page
(one column per adapter, the matrix's layout), with the machine, load and date of this run.
"""

from __future__ import annotations

import argparse
import datetime
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from corral.agents import locate
from corral.redirect import redirect_for
from corral.testing import FakeModelServer

REPLY = "Hello from the scripted model."
PROMPT = "Say hello."
MODEL = "fake-model"
GOAL_RATIO = 1.10
GOAL_ADDED_MS = 50.0


@dataclass(frozen=True)
class Pair:
    adapter: str
    """corral's adapter id (``corral run ADAPTER``)."""
    cli: str
    """The pinned CLI (``corral agents list``)."""
    before: tuple[str, ...]
    """Bare headless argv before the redirection's argv."""
    after: tuple[str, ...]
    """…and after it; the prompt is appended last."""
    model: str = MODEL
    """What ``corral run --model`` gets (the bare CLI runs the redirection's default model)."""


PAIRS = (
    Pair("claude-code", "claude", (), ("--output-format", "stream-json", "--verbose", "-p")),
    Pair("qwen", "qwen", (), ("--output-format", "stream-json", "-p")),
    Pair("codex-exec", "codex", ("exec", "--json", "--skip-git-repo-check"), ()),
    Pair("codex", "codex", ("exec", "--json", "--skip-git-repo-check"), ()),
    Pair("gemini", "gemini", (), ("--output-format", "stream-json", "--skip-trust", "-p")),
    Pair("gemini-exec", "gemini", (), ("--output-format", "stream-json", "--skip-trust", "-p")),
    Pair("opencode", "opencode", ("run", "--format", "json"), ()),
    Pair("opencode-run", "opencode", ("run", "--format", "json"), (), "corral/fake-model"),
    Pair("pi", "pi", ("--mode", "json"), ("-p",)),
    Pair("hermes", "hermes", (), ("-z",)),
)


@dataclass
class Sample:
    first_text: float | None
    end: float
    peak_rss_kib: int | None
    returncode: int
    cpu: float | None = None


@dataclass
class Series:
    samples: list[Sample] = field(default_factory=list)

    def median(self, attr: str) -> float | None:
        values = [getattr(s, attr) for s in self.samples if getattr(s, attr) is not None]
        return statistics.median(values) if values else None


def _peak_rss(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def measure(argv: list[str], env: dict[str, str], cwd: Path, timeout: float) -> Sample:
    """Spawn ``argv``; note when the reply first shows on stdout, when it exits, and its VmHWM."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    first: list[float] = []
    peak: list[int] = []

    def sample_rss() -> None:
        while proc.poll() is None:
            value = _peak_rss(proc.pid)
            if value is not None:
                peak.append(value)
            time.sleep(0.02)

    sampler = threading.Thread(target=sample_rss, daemon=True)
    sampler.start()
    assert proc.stdout is not None
    try:
        for raw in proc.stdout:
            if not first and b"Hello" in raw:
                first.append(time.perf_counter() - start)
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.wait()
    end = time.perf_counter() - start
    sampler.join(timeout=1)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # every descendant reaped by then
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Sample(
        first[0] if first else None, end, max(peak) if peak else None, proc.returncode, cpu
    )


def bare_argv(pair: Pair, binary: Path, extra: tuple[str, ...]) -> list[str]:
    return [str(binary), *pair.before, *extra, *pair.after, PROMPT]


def corral_argv(pair: Pair, binary: Path, extra: tuple[str, ...], cwd: Path) -> list[str]:
    argv = [sys.executable, "-m", "corral", "run", pair.adapter, PROMPT, "--json"]
    argv += ["--binary", str(binary), "--model", pair.model, "--cwd", str(cwd)]
    argv += [f"--agent-arg={arg}" for arg in extra]
    return argv


def _git_repo(root: Path) -> Path:
    repo = root / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("# bench\n")
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(root)}
    ident = ["-c", "user.name=corral", "-c", "user.email=corral@localhost"]
    for argv in (
        ["init", "-q", "-b", "main"],
        ["add", "README.md"],
        [*ident, "commit", "-qm", "i"],
    ):
        subprocess.run(["git", *argv], cwd=repo, env=env, check=True, capture_output=True)
    return repo


def run_pair(pair: Pair, server: FakeModelServer, repeat: int, timeout: float) -> dict[str, object]:
    binary = locate(pair.cli)
    if binary is None:
        return {"adapter": pair.adapter, "skipped": f"{pair.cli} is not installed"}
    bare, ours = Series(), Series()
    with tempfile.TemporaryDirectory(prefix="corral-bench-") as tmp:
        root = Path(tmp)
        home = root / "home"
        home.mkdir()
        repo = _git_repo(root)
        red = redirect_for(pair.cli, base_url=server.base_url, model=MODEL, api_key="t", home=home)
        red.apply()
        env = red.environ({k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")})
        env["NO_COLOR"] = "1"
        # As a shell in the repo would: OpenCode and Claude Code take $PWD as their project.
        env["PWD"] = str(repo)
        # One untimed run of each warms the CLI's caches (node's compile cache, first-run files).
        measure(bare_argv(pair, binary, red.argv), env, repo, timeout)
        measure(corral_argv(pair, binary, red.argv, repo), env, repo, timeout)
        for _ in range(repeat):
            bare.samples.append(measure(bare_argv(pair, binary, red.argv), env, repo, timeout))
            ours.samples.append(
                measure(corral_argv(pair, binary, red.argv, repo), env, repo, timeout)
            )
    failed = [s.returncode for s in bare.samples + ours.samples if s.returncode != 0]
    b_end, c_end = bare.median("end"), ours.median("end")
    assert b_end is not None and c_end is not None
    return {
        "adapter": pair.adapter,
        "bare_first_text": bare.median("first_text"),
        "corral_first_text": ours.median("first_text"),
        "bare_end": b_end,
        "corral_end": c_end,
        "ratio": c_end / b_end,
        "added_ms": (c_end - b_end) * 1000,
        "bare_cpu": bare.median("cpu"),
        "corral_cpu": ours.median("cpu"),
        "bare_rss_mib": (bare.median("peak_rss_kib") or 0) / 1024,
        "corral_rss_mib": (ours.median("peak_rss_kib") or 0) / 1024,
        "failed_runs": len(failed),
    }


def _fmt(value: object, spec: str) -> str:
    return format(value, spec) if isinstance(value, int | float) else "-"


_ROWS = (
    (
        "bare CLI: first text / turn end (s)",
        lambda r: f"{_fmt(r['bare_first_text'], '.2f')} / {_fmt(r['bare_end'], '.2f')}",
    ),
    (
        "`corral run`: first text / turn end (s)",
        lambda r: f"{_fmt(r['corral_first_text'], '.2f')} / {_fmt(r['corral_end'], '.2f')}",
    ),
    ("wall ratio (goal ≤ 1.10)", lambda r: _fmt(r["ratio"], ".2f")),
    ("added ms (goal ≤ 50)", lambda r: _fmt(r["added_ms"], ".0f")),
    (
        "CPU of the process tree: corral / bare (s)",
        lambda r: f"{_fmt(r.get('corral_cpu'), '.2f')} / {_fmt(r.get('bare_cpu'), '.2f')}",
    ),
    (
        "peak RSS: corral's process / bare CLI (MiB)",
        lambda r: f"{_fmt(r['corral_rss_mib'], '.0f')} / {_fmt(r['bare_rss_mib'], '.0f')}",
    ),
    (
        "goal",
        lambda r: (
            "met" if r["ratio"] <= GOAL_RATIO and r["added_ms"] <= GOAL_ADDED_MS else "missed"
        ),
    ),
)


def overhead_block(rows: list[dict[str, object]], repeat: int, load: tuple[float, ...]) -> str:
    """The compatibility page's ``overhead`` block: one column per measured adapter."""
    done = [r for r in rows if "skipped" not in r]
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "## Overhead over the bare CLI",
        "",
        f"Written by `python -m benchmarks.bench_overhead --write-docs docs/compatibility.md` on "
        f"{when}: {os.cpu_count()} cores, load average {load[0]:.1f} / {load[1]:.1f} / "
        f"{load[2]:.1f} at the start. One text turn against the scripted model, the bare headless "
        f"CLI and `corral run ADAPTER --json` alternating, median of {repeat}; the bare `codex` "
        "column runs `codex exec`, corral's `codex` runs the app-server. What the figures mean: "
        "[performance](performance.md).",
        "",
        "| | " + " | ".join(str(r["adapter"]) for r in done) + " |",
        "|---|" + "---|" * len(done),
    ]
    for label, cell in _ROWS:
        lines.append(f"| {label} | " + " | ".join(cell(r) for r in done) + " |")  # type: ignore[no-untyped-call]
    for r in rows:
        if "skipped" in r:
            lines += ["", f"{r['adapter']}: not measured ({r['skipped']})."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_overhead")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="", help="Comma-separated adapter ids.")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--write-docs", type=Path, default=None, metavar="PAGE")
    args = parser.parse_args(argv)
    load = os.getloadavg()
    measured: list[dict[str, object]] = []
    wanted = {a for a in args.only.split(",") if a}
    print(
        f"{'adapter':<12} {'bare 1st':>8} {'corral 1st':>10} {'bare end':>8} {'corral end':>10}"
        f" {'ratio':>6} {'added ms':>8} {'CPU c/b':>11} {'corral RSS':>10} {'CLI RSS':>8}  goal"
    )
    worst = 0
    with FakeModelServer({"default": {"text": REPLY, "chunks": 1}}) as server:
        for pair in PAIRS:
            if wanted and pair.adapter not in wanted:
                continue
            r = run_pair(pair, server, args.repeat, args.timeout)
            measured.append(r)
            if "skipped" in r:
                print(f"{pair.adapter:<12} skipped: {r['skipped']}")
                continue
            ratio, added = float(r["ratio"]), float(r["added_ms"])  # type: ignore[arg-type]
            met = ratio <= GOAL_RATIO and added <= GOAL_ADDED_MS
            worst = worst or (0 if met else 1)
            note = "met" if met else "missed"
            if r["failed_runs"]:
                note += f" ({r['failed_runs']} runs exited non-zero)"
            print(
                f"{pair.adapter:<12} {_fmt(r['bare_first_text'], '8.3f')}"
                f" {_fmt(r['corral_first_text'], '10.3f')} {_fmt(r['bare_end'], '8.3f')}"
                f" {_fmt(r['corral_end'], '10.3f')} {ratio:>6.2f} {added:>8.0f}"
                f" {_fmt(r['corral_cpu'], '5.2f')}/{_fmt(r['bare_cpu'], '5.2f')}"
                f" {_fmt(r['corral_rss_mib'], '8.1f')}Mi {_fmt(r['bare_rss_mib'], '6.1f')}Mi  {note}"
            )
    if args.write_docs is not None and measured:
        from corral.testing.conformance._report import splice_block

        page = args.write_docs.read_text() if args.write_docs.is_file() else "# Compatibility\n"
        block = overhead_block(measured, args.repeat, load)
        args.write_docs.write_text(splice_block(page, "overhead", block))
        print(f"wrote the overhead block of {args.write_docs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
