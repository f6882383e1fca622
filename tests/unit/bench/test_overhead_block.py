"""The compatibility page's overhead block: the bare, ``corral run`` and ``corral serve`` rows."""

from __future__ import annotations

import datetime

from benchmarks._overhead_docs import goal, met, overhead_block
from benchmarks._serve_session import ServeSample
from benchmarks.bench_overhead import serve_figures

from corral.testing.conformance._report import blocks, splice_block

NOW = datetime.datetime(2026, 12, 2, 4, 0, tzinfo=datetime.UTC)
RUN = {
    "adapter": "pi",
    "bare_first_text": 0.9,
    "corral_first_text": 1.0,
    "bare_end": 1.0,
    "corral_end": 1.04,
    "ratio": 1.04,
    "added_ms": 40.0,
    "bare_cpu": 1.2,
    "corral_cpu": 1.3,
    "bare_rss_mib": 179.0,
    "corral_rss_mib": 25.0,
    "failed_runs": 0,
}
SERVE = {
    "serve_ready": 0.5,
    "serve_first_text": 0.45,
    "serve_end": 0.7,
    "serve_ratio": 1.2,
    "serve_added_ms": 200.0,
    "serve_first_added_ms": 50.0,
    "serve_rss_mib": 48.0,
    "serve_rss_base_mib": 46.0,
    "serve_writer_rss_mib": 31.0,
    "serve_writer_rss_base_mib": 28.0,
}


def _cells(block: str, label: str) -> list[str]:
    line = next(x for x in block.splitlines() if x.startswith(f"| {label}"))
    return [c.strip() for c in line.strip("|").split("|")][1:]


def test_the_serve_rows_sit_under_the_run_rows_one_column_per_adapter() -> None:
    rows = [{**RUN, **SERVE}, {**RUN, "adapter": "codex", "added_ms": 60.0}]
    block = overhead_block(rows, 5, (3.5, 1.7, 1.7), now=NOW, cores=2)
    assert "2026-12-02 04:00 UTC: 2 cores, load average 3.5 / 1.7 / 1.7" in block
    assert "| | pi | codex |" in block
    assert "the bare headless CLI, `corral run ADAPTER --json` and a new session in one" in block
    assert _cells(block, "`corral run`: first text / turn end (s)") == ["1.00 / 1.04"] * 2
    assert _cells(block, "goal") == ["met", "missed"]
    assert _cells(block, "`corral serve` session: ready / first text / turn end (s)") == [
        "0.50 / 0.45 / 0.70",
        "- / - / -",
    ]
    assert _cells(
        block, "serve: ready + turn end vs the bare CLI's last line: ratio / added ms"
    ) == [
        "1.20 / 200",
        "- / -",
    ]
    assert _cells(block, "serve: ready + first text, ms added to the bare first text") == [
        "50",
        "-",
    ]
    assert _cells(block, "serve goal (as one-shot)") == ["missed", "-"]
    # the writer's process is corral's too (decision 051): its own row beside the service's
    assert _cells(
        block, "serve: RSS of the service's database writer process, during / before (MiB)"
    ) == ["31 / 28", "- / -"]
    labels = [x.split("|")[1].strip() for x in block.splitlines() if x.startswith("| ")]
    assert labels.index("goal") < labels.index("serve goal (as one-shot)")


def test_a_run_without_serve_keeps_the_old_rows_only_and_names_the_skipped() -> None:
    rows = [RUN, {"adapter": "hermes", "skipped": "hermes is not installed"}]
    block = overhead_block(rows, 3, (1.0, 1.0, 1.0), now=NOW, cores=2)
    assert "corral serve" not in block and "| serve" not in block
    assert "the bare headless CLI and `corral run ADAPTER --json` alternating, median of 3" in block
    assert "| | pi |" in block
    assert block.rstrip().endswith("hermes: not measured (hermes is not installed).")
    page = splice_block("# Compatibility\n\n## Notes\n\n1. x\n", "overhead", block)
    assert blocks(page) == [f"<!-- overhead:begin -->\n{block}<!-- overhead:end -->\n"]


def test_the_goal_is_both_the_ratio_and_the_added_milliseconds() -> None:
    assert met(1.10, 50.0) is True
    assert met(1.05, 51.0) is False
    assert met(1.11, 10.0) is False
    assert met(None, 10.0) is None


def test_a_failed_run_is_never_met() -> None:
    """A run that exited non-zero timed no turn: its row says so instead of met (it once read
    "met (7 runs failed)" when every ``corral run`` had failed at once)."""
    assert goal(1.0, 10.0) == "met"
    assert goal(1.0, 10.0, 7) == "failed (7 runs)"
    assert goal(2.0, 900.0, 1) == "failed (1 run)"
    block = overhead_block([{**RUN, "failed_runs": 2}], 5, (0.1, 0.2, 0.3), now=NOW, cores=2)
    assert _cells(block, "goal") == ["failed (2 runs)"]


def test_serve_figures_are_medians_and_the_whole_is_ready_plus_turn_end() -> None:
    served = [
        ServeSample(0.2, 0.1, 0.3, peak_rss_kib=40 * 1024, ok=True, peak_writer_rss_kib=30 << 10),
        ServeSample(0.4, 0.2, 0.4, peak_rss_kib=50 * 1024, ok=True, peak_writer_rss_kib=29 << 10),
        ServeSample(0.3, None, None, peak_rss_kib=45 * 1024, ok=False),
    ]
    figures = serve_figures(served, bare_last=0.5, bare_first=0.2)
    assert figures["serve_ready"] == 0.3
    assert figures["serve_first_text"] == 0.15000000000000002
    assert figures["serve_end"] == 0.35
    assert figures["serve_ratio"] == (0.5 + 0.8) / 2 / 0.5  # wholes 0.5 and 0.8
    assert round(float(figures["serve_added_ms"]), 6) == 150.0  # type: ignore[arg-type]
    # ready + first text: 0.3 and 0.6, median 0.45, 250 ms over the bare 0.2 s
    assert round(float(figures["serve_first_added_ms"]), 6) == 250.0  # type: ignore[arg-type]
    assert figures["serve_rss_mib"] == 50.0
    assert figures["serve_writer_rss_mib"] == 30.0
