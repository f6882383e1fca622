"""What corral adds over the bare CLI, per target, in the same run (issue 20 part 1).

    python -m benchmarks.bench_overhead [--repeat 5] [--only claude-code,pi] [--no-serve]
                                        [--write-docs docs/compatibility.md]

For each pair below, the pinned CLI runs one text-only turn against the scripted model server three
ways: bare, in its own headless mode (the anchor); through ``corral run ADAPTER … --json``; and
through a new session in one ``corral serve`` child process started for the whole run (loopback,
temporary ``CORRAL_HOME``, its own token; ``--no-serve`` leaves it out). All three get the same
binary, redirection, environment, prompt and model (the service gets the redirection through
``benchmarks._serve_targets``; ``corral run`` finds the binary itself, as a user's run does, when
its look-up gives the same file, else it gets ``--binary``). Runs alternate (bare, run, serve,
bare, run, serve …) so drift on a shared machine falls on every side. Per bare and ``corral run``
run it records:

* first text  seconds from spawn to the first stdout line that carries the scripted reply
* end         seconds from spawn to exit (the turn end, for a one-shot run)
* peak RSS    the high-water mark (VmHWM) of the process we spawned itself: for ``corral run`` that
              is corral's own Python process, not the agent below it; for the bare CLI, the CLI's
* CPU         user + system seconds of the whole process tree (corral and the agent below it),
              which a loaded machine stretches far less than the wall time

and per serve session (``benchmarks._serve_session``, times as an SSE observer sees them):

* ready       ``POST /api/sessions`` to its 201 (the adapter started, ``session.started`` stored:
              for a long-lived protocol the CLI is spawned and its handshake answered; a
              one-process-per-prompt driver spawns nothing yet)
* first text  the prompt's ``POST`` to the first ``text.delta`` / ``text.complete`` on the stream
* turn end    the prompt's ``POST`` to ``turn.completed`` on the stream (a one-shot CLI may still
              be exiting then; the bare "end" is its exit)
* RSS         the highest VmRSS of the service process during the session, and of its database
              writer process (``corral serve``'s default, decision 051), each on its own

It prints medians, the wall ratio corral/bare and the added milliseconds; for serve (a new session
and one turn stand for one one-shot run), ready + turn end against the bare CLI's last stdout line
(its own turn end, as ``turn.completed`` is corral's: both before the CLI exits) and ready + first
text against the bare first text. Goal (issue 20):
wall ratio <= 1.10 and <= 50 ms added. Under each ``corral run`` row, the ``paired`` line is the
median of the per-round differences (corral's end minus the bare end of the same round) with a
90 % distribution-free interval, and whether this run shows the goal met, shows it missed, or
cannot tell (``benchmarks._paired``): the bare CLIs' own times move by more than 50 ms between
runs, so the medians' verdict alone can flip from one run to the next. "Time to ready" is not
separate for a one-shot run: the CLI is ready when it starts the turn, so it is inside "first
text". The per-event figure of the live path is ``benchmarks.bench_live_path``.

``--write-docs PAGE`` also writes the figures as the ``overhead`` block of the compatibility page
(``benchmarks._overhead_docs``: one column per adapter, the matrix's layout), with the machine,
load and date of this run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
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

from corral.agents import agents_root, locate
from corral.redirect import redirect_for
from corral.testing import FakeModelServer

from ._bytecode import as_installed
from ._command import corral_command
from ._overhead_docs import fmt, goal, met, overhead_block
from ._paired import Paired, paired
from ._serve_session import ServeChild, ServeSample, one_turn, serve_child
from .bench_serve_scale import _cpu_s, _rss_kib, _writers_rss_kib

REPLY = "Hello from the scripted model."
PROMPT = "Say hello."
MODEL = "fake-model"


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
    last_line: float | None = None
    """Seconds from spawn to the last stdout line: the CLI's own end of the turn, before exit."""


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
    last: list[float] = []
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
            if raw.strip():
                last[:] = [time.perf_counter() - start]
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
        first[0] if first else None,
        end,
        max(peak) if peak else None,
        proc.returncode,
        cpu,
        last[0] if last else None,
    )


def bare_argv(pair: Pair, binary: Path, extra: tuple[str, ...]) -> list[str]:
    return [str(binary), *pair.before, *extra, *pair.after, PROMPT]


def corral_argv(pair: Pair, binary: Path, extra: tuple[str, ...], cwd: Path) -> list[str]:
    """``corral run`` as a user types it: the installed ``corral`` script (``_command``), and no
    ``--binary`` when corral's own look-up (the pinned install, then PATH) finds this very binary,
    since that look-up is part of what it costs."""
    from corral.registry._resolve import resolve_executable_path

    argv = [*corral_command(), "run", pair.adapter, PROMPT, "--json"]
    found = resolve_executable_path(pair.cli)
    if found is None or Path(found.path) != binary:
        argv += ["--binary", str(binary)]
    argv += ["--model", pair.model, "--cwd", str(cwd)]
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


@dataclass(frozen=True)
class Workspace:
    """One pair's isolated home and git repository, its CLI redirected to the scripted model."""

    binary: Path
    repo: Path
    env: dict[str, str]
    argv: tuple[str, ...]
    redirect_env: dict[str, str]

    def serve_target(self) -> dict[str, object]:
        """What the ``corral serve`` child adds to this adapter (``benchmarks._serve_targets``):
        the same binary, redirection and environment the bare CLI gets."""
        env = {**self.redirect_env, "NO_COLOR": "1", "PWD": str(self.repo)}
        return {"binary": str(self.binary), "env": env, "argv": list(self.argv)}


def prepare(pair: Pair, server: FakeModelServer, root: Path) -> Workspace | None:
    binary = locate(pair.cli)
    if binary is None:
        return None
    root.mkdir(parents=True)
    home = root / "home"
    home.mkdir()
    repo = _git_repo(root)
    red = redirect_for(pair.cli, base_url=server.base_url, model=MODEL, api_key="t", home=home)
    red.apply()
    env = red.environ({k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")})
    env["NO_COLOR"] = "1"
    # As a shell in the repo would: OpenCode and Claude Code take $PWD as their project.
    env["PWD"] = str(repo)
    # The redirection moves HOME, and with it the default cache: corral run keeps finding the
    # pinned CLIs where this process found them (the bare CLI ignores the variable).
    env["CORRAL_AGENTS_DIR"] = str(agents_root())
    return Workspace(binary, repo, env, red.argv, dict(red.env))


def _serve_sample(pair: Pair, ws: Workspace, child: ServeChild, timeout: float) -> ServeSample:
    body = {"adapter_id": pair.adapter, "cwd": str(ws.repo), "model": pair.model}
    sample = asyncio.run(one_turn(child, body, PROMPT, timeout))
    _settle(child.pid)
    return sample


def _settle(pid: int, bound: float = 5.0) -> None:
    """Wait (untimed) until the service has stopped working on the session just killed — its CPU
    still for 100 ms, at most ``bound`` s — so that its clean-up does not land in the bare or
    ``corral run`` sample that comes next."""
    deadline = time.monotonic() + bound
    before = _cpu_s(pid)
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = _cpu_s(pid)
        if now - before < 0.002:
            return
        before = now


def run_pair(
    pair: Pair, ws: Workspace, child: ServeChild | None, repeat: int, timeout: float
) -> dict[str, object]:
    """Bare, ``corral run`` and (with ``child``) a ``corral serve`` session, alternating."""
    bare, ours = Series(), Series()
    served: list[ServeSample] = []
    bare_argv_ = bare_argv(pair, ws.binary, ws.argv)
    corral_argv_ = corral_argv(pair, ws.binary, ws.argv, ws.repo)
    # One untimed run of each warms the CLI's caches (node's compile cache, first-run files).
    measure(bare_argv_, ws.env, ws.repo, timeout)
    measure(corral_argv_, ws.env, ws.repo, timeout)
    if child is not None:
        _serve_sample(pair, ws, child, timeout)
    for _ in range(repeat):
        bare.samples.append(measure(bare_argv_, ws.env, ws.repo, timeout))
        ours.samples.append(measure(corral_argv_, ws.env, ws.repo, timeout))
        if child is not None:
            served.append(_serve_sample(pair, ws, child, timeout))
    failed = [s.returncode for s in bare.samples + ours.samples if s.returncode != 0]
    b_end, c_end = bare.median("end"), ours.median("end")
    assert b_end is not None and c_end is not None
    row: dict[str, object] = {
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
        "serve_failed_runs": sum(not s.ok for s in served),
        "paired": paired([s.end for s in bare.samples], [s.end for s in ours.samples]),
    }
    if served:
        b_last, b_first = bare.median("last_line"), bare.median("first_text")
        row.update(serve_figures(served, b_last or b_end, b_first))
    return row


def serve_figures(
    served: list[ServeSample], bare_last: float, bare_first: float | None
) -> dict[str, object]:
    """Medians of the serve samples. A new session and one turn stand for one bare run: ready +
    turn end against the bare CLI's last line (its own turn end; both before any exit), ready +
    first text against its first text."""

    def median(values: list[float | None]) -> float | None:
        found = [v for v in values if v is not None]
        return statistics.median(found) if found else None

    whole = median([s.ready + s.end if s.end is not None else None for s in served])
    to_text = median([s.ready + s.first_text if s.first_text is not None else None for s in served])
    return {
        "serve_ready": median([s.ready for s in served]),
        "serve_first_text": median([s.first_text for s in served]),
        "serve_end": median([s.end for s in served]),
        "serve_ratio": whole / bare_last if whole is not None else None,
        "serve_added_ms": (whole - bare_last) * 1000 if whole is not None else None,
        "serve_first_added_ms": (
            (to_text - bare_first) * 1000 if to_text is not None and bare_first else None
        ),
        "serve_rss_mib": max(s.peak_rss_kib for s in served) / 1024,
        "serve_writer_rss_mib": max(s.peak_writer_rss_kib for s in served) / 1024,
    }


def _print(r: dict[str, object]) -> bool:
    """One line per way of running (two with ``corral serve``); whether the goal was met."""
    ratio, added = float(r["ratio"]), float(r["added_ms"])  # type: ignore[arg-type]
    ok = bool(met(ratio, added)) and not r["failed_runs"]
    note = goal(ratio, added, r["failed_runs"])
    print(
        f"{r['adapter']:<12} {fmt(r['bare_first_text'], '8.3f')}"
        f" {fmt(r['corral_first_text'], '10.3f')} {fmt(r['bare_end'], '8.3f')}"
        f" {fmt(r['corral_end'], '10.3f')} {ratio:>6.2f} {added:>8.0f}"
        f" {fmt(r['corral_cpu'], '5.2f')}/{fmt(r['bare_cpu'], '5.2f')}"
        f" {fmt(r['corral_rss_mib'], '8.1f')}Mi {fmt(r['bare_rss_mib'], '6.1f')}Mi  {note}"
    )
    pair = r.get("paired")
    if isinstance(pair, Paired):
        print(
            f"{'  paired':<12} added per round, median [{pair.level:.0%} interval]:"
            f" {pair.text()} (bound {pair.bound_ms:.0f} ms)"
        )
    if "serve_end" in r:
        serve_failed = r["serve_failed_runs"]
        serve_ok = bool(met(r["serve_ratio"], r["serve_added_ms"])) and not serve_failed
        ok = ok and serve_ok
        print(
            f"{'  serve':<12} ready {fmt(r['serve_ready'], '.3f')} s, first text"
            f" {fmt(r['serve_first_text'], '.3f')} s, turn end {fmt(r['serve_end'], '.3f')} s"
            f" (from the prompt); ready + end vs bare last line: {fmt(r['serve_ratio'], '.2f')}x"
            f" {fmt(r['serve_added_ms'], '+.0f')} ms; ready + first text"
            f" {fmt(r['serve_first_added_ms'], '+.0f')} ms; service RSS {fmt(r['serve_rss_mib'], '.0f')}"
            f" MiB + writer {fmt(r.get('serve_writer_rss_mib'), '.0f')} MiB  {goal(r['serve_ratio'], r['serve_added_ms'], serve_failed)}"
        )
    return ok


def _summary(rows: list[dict[str, object]]) -> None:
    """How many rows met the goal by their medians, and what the paired rounds show of it."""
    done = [r for r in rows if "skipped" not in r]
    if not done:
        return
    by_median = sum(bool(met(r["ratio"], r["added_ms"])) and not r["failed_runs"] for r in done)
    verdicts = [p.verdict for r in done if isinstance(p := r.get("paired"), Paired)]
    print(
        f"corral run: met by the medians for {by_median} of {len(done)}; paired rounds:"
        f" {verdicts.count('shown met')} shown met, {verdicts.count('shown missed')} shown"
        f" missed, {verdicts.count('undecided')} undecided"
    )


def main(argv: list[str] | None = None) -> int:
    as_installed()  # start-up timed as an install has it: with bytecode (benchmarks._bytecode)
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_overhead")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="", help="Comma-separated adapter ids.")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument(
        "--no-serve", action="store_true", help="Only the bare CLI and corral run, no corral serve."
    )
    parser.add_argument("--write-docs", type=Path, default=None, metavar="PAGE")
    args = parser.parse_args(argv)
    load = os.getloadavg()
    wanted = {a for a in args.only.split(",") if a}
    pairs = [p for p in PAIRS if not wanted or p.adapter in wanted]
    print(
        f"{'adapter':<12} {'bare 1st':>8} {'corral 1st':>10} {'bare end':>8} {'corral end':>10}"
        f" {'ratio':>6} {'added ms':>8} {'CPU c/b':>11} {'corral RSS':>10} {'CLI RSS':>8}  goal"
    )
    measured: list[dict[str, object]] = []
    with (
        FakeModelServer({"default": {"text": REPLY, "chunks": 1}}) as server,
        tempfile.TemporaryDirectory(prefix="corral-bench-") as tmp,
        contextlib.ExitStack() as stack,
    ):
        root = Path(tmp)
        spaces = {p.adapter: prepare(p, server, root / p.adapter) for p in pairs}
        child = None
        if not args.no_serve:
            targets = {a: ws.serve_target() for a, ws in spaces.items() if ws is not None}
            child = stack.enter_context(serve_child(root, targets))
            base_rss = _rss_kib(child.pid) / 1024
            base_writer_rss = _writers_rss_kib(child.pid) / 1024
        for pair in pairs:
            ws = spaces[pair.adapter]
            if ws is None:
                measured.append(
                    {"adapter": pair.adapter, "skipped": f"{pair.cli} is not installed"}
                )
                print(f"{pair.adapter:<12} skipped: {pair.cli} is not installed")
                continue
            r = run_pair(pair, ws, child, args.repeat, args.timeout)
            if child is not None:
                r["serve_rss_base_mib"] = base_rss
                r["serve_writer_rss_base_mib"] = base_writer_rss
            measured.append(r)
            _print(r)
    _summary(measured)
    if args.write_docs is not None and measured:
        from corral.testing.conformance._report import splice_block

        page = args.write_docs.read_text() if args.write_docs.is_file() else "# Compatibility\n"
        block = overhead_block(measured, args.repeat, load)
        args.write_docs.write_text(splice_block(page, "overhead", block))
        print(f"wrote the overhead block of {args.write_docs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
