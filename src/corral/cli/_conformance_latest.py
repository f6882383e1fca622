"""``corral conformance --latest``: the suite on each CLI's newest release and the drift report.

Exit codes: 0 every target ran and nothing fails on a newest release · 1 a scenario fails there, or
a target could not run (the report says why).
"""

from __future__ import annotations

import asyncio
import shlex
import sys
from pathlib import Path

import typer

from ._common import console, err_console, print_json


def run_latest(
    agents: list[str], scenarios: list[str], write_report: Path | None, as_json: bool
) -> None:
    from ..testing.conformance import ScenarioResult
    from ..testing.conformance._drift import drift_markdown
    from ..testing.conformance._drift_run import cli_drift, drift

    clis = cli_drift()
    if all(c.latest is None for c in clis):
        err_console.print(
            "no newest releases known: run `corral agents install --latest` first",
            highlight=False,
        )
        raise typer.Exit(1)

    def show(side: str, r: ScenarioResult) -> None:
        colour = {"pass": "green", "fail": "red"}.get(r.outcome.value, "yellow")
        reason = f" — {r.reason}" if r.reason else ""
        (err_console if as_json else console).print(
            f"{side:6} {r.agent:12} {r.scenario:18} [{colour}]{r.outcome.value}[/]"
            f" ({r.seconds:.1f} s){reason}",
            highlight=False,
        )

    command = shlex.join(["corral", *sys.argv[1:]])
    report = asyncio.run(drift(agents or None, scenarios or None, command=command, on_result=show))
    for t in report.targets:
        if not t.ran:
            err_console.print(f"[yellow]{t.target}[/]: not run: {t.reason}", highlight=False)
    if as_json:
        print_json(report)
    if write_report is not None:
        write_report.write_text(drift_markdown(report), "utf-8")
        err_console.print(f"wrote {write_report}")
    failed = any(s.latest == "fail" for t in report.targets for s in t.scenarios)
    raise typer.Exit(1 if failed or any(not t.ran for t in report.targets) else 0)
