"""The compatibility page's ``overhead`` block, from ``bench_overhead``'s rows (one column per
adapter, the matrix's layout): the bare CLI, ``corral run`` and a session in ``corral serve``."""

from __future__ import annotations

import datetime
import os
from collections.abc import Callable, Mapping, Sequence

GOAL_RATIO = 1.10
GOAL_ADDED_MS = 50.0

Row = Mapping[str, object]


def fmt(value: object, spec: str) -> str:
    return format(value, spec) if isinstance(value, int | float) else "-"


def met(ratio: object, added_ms: object) -> bool | None:
    """Whether a wall ratio and added milliseconds meet the one-shot goal (``None``: unmeasured)."""
    if not isinstance(ratio, int | float) or not isinstance(added_ms, int | float):
        return None
    return ratio <= GOAL_RATIO and added_ms <= GOAL_ADDED_MS


def goal(ratio: object, added_ms: object, failed: object = 0) -> str:
    """The verdict of a cell; a run that failed is never "met" (its time is not a turn's)."""
    if isinstance(failed, int) and failed:
        return f"failed ({failed} run{'' if failed == 1 else 's'})"
    verdict = met(ratio, added_ms)
    return "-" if verdict is None else "met" if verdict else "missed"


def _paired_text(value: object) -> str:
    from ._paired import Paired  # here: that module imports the goal from this one

    return value.text() if isinstance(value, Paired) else "-"


def _pair(row: Row, a: str, b: str, spec: str) -> str:
    return f"{fmt(row.get(a), spec)} / {fmt(row.get(b), spec)}"


ROWS: tuple[tuple[str, Callable[[Row], str]], ...] = (
    (
        "bare CLI: first text / turn end (s)",
        lambda r: _pair(r, "bare_first_text", "bare_end", ".2f"),
    ),
    (
        "`corral run`: first text / turn end (s)",
        lambda r: _pair(r, "corral_first_text", "corral_end", ".2f"),
    ),
    ("wall ratio (goal ≤ 1.10)", lambda r: fmt(r.get("ratio"), ".2f")),
    ("added ms (goal ≤ 50)", lambda r: fmt(r.get("added_ms"), ".0f")),
    (
        "added ms per round, paired: median [90 % interval], what the run shows",
        lambda r: _paired_text(r.get("paired")),
    ),
    (
        "CPU of the process tree: corral / bare (s)",
        lambda r: _pair(r, "corral_cpu", "bare_cpu", ".2f"),
    ),
    (
        "peak RSS: corral's process / bare CLI (MiB)",
        lambda r: _pair(r, "corral_rss_mib", "bare_rss_mib", ".0f"),
    ),
    ("goal", lambda r: goal(r.get("ratio"), r.get("added_ms"), r.get("failed_runs"))),
    (
        "`corral serve` session: ready / first text / turn end (s)",
        lambda r: (
            f"{fmt(r.get('serve_ready'), '.2f')} / {fmt(r.get('serve_first_text'), '.2f')} / "
            f"{fmt(r.get('serve_end'), '.2f')}"
        ),
    ),
    (
        "serve: ready + turn end vs the bare CLI's last line: ratio / added ms",
        lambda r: f"{fmt(r.get('serve_ratio'), '.2f')} / {fmt(r.get('serve_added_ms'), '.0f')}",
    ),
    (
        "serve: ready + first text, ms added to the bare first text",
        lambda r: fmt(r.get("serve_first_added_ms"), ".0f"),
    ),
    (
        "serve: RSS of corral's service during the turn / before any session (MiB)",
        lambda r: _pair(r, "serve_rss_mib", "serve_rss_base_mib", ".0f"),
    ),
    (
        "serve: RSS of the service's database writer process, during / before (MiB)",
        lambda r: _pair(r, "serve_writer_rss_mib", "serve_writer_rss_base_mib", ".0f"),
    ),
    (
        "serve goal (as one-shot)",
        lambda r: goal(r.get("serve_ratio"), r.get("serve_added_ms"), r.get("serve_failed_runs")),
    ),
)


def overhead_block(
    rows: Sequence[Row],
    repeat: int,
    load: tuple[float, ...],
    *,
    now: datetime.datetime | None = None,
    cores: int | None = None,
) -> str:
    """The block's Markdown: one column per measured adapter, a line per skipped one. The serve
    rows are left out of a run without ``corral serve`` (``--no-serve``)."""
    done = [r for r in rows if "skipped" not in r]
    serve = any("serve_end" in r for r in done)
    when = (now or datetime.datetime.now(datetime.UTC)).strftime("%Y-%m-%d %H:%M UTC")
    serve_text = (
        " and a new session in one `corral serve` child process (created, sent the prompt and "
        "followed over SSE: ready is the create's answer, first text and turn end are counted "
        "from the prompt's POST, and ready + turn end is set against the bare CLI's last stdout "
        "line)"
        if serve
        else ""
    )
    lines = [
        "## Overhead over the bare CLI",
        "",
        f"Written by `python -m benchmarks.bench_overhead --write-docs docs/compatibility.md` on "
        f"{when}: {cores or os.cpu_count()} cores, load average {load[0]:.1f} / {load[1]:.1f} / "
        f"{load[2]:.1f} at the start. One text turn against the scripted model, the bare headless "
        f"CLI{',' if serve else ' and'} `corral run ADAPTER --json`{serve_text} alternating, median "
        f"of {repeat}; the bare "
        "`codex` column runs `codex exec`, corral's `codex` runs the app-server. What the figures "
        "mean: [performance](performance.md).",
        "",
        "| | " + " | ".join(str(r["adapter"]) for r in done) + " |",
        "|---|" + "---|" * len(done),
    ]
    for label, cell in ROWS:
        if label.startswith(("`corral serve`", "serve")) and not serve:
            continue
        lines.append(f"| {label} | " + " | ".join(cell(r) for r in done) + " |")
    for r in rows:
        if "skipped" in r:
            lines += ["", f"{r['adapter']}: not measured ({r['skipped']})."]
    return "\n".join(lines) + "\n"
