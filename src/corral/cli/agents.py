"""``corral agents install|list`` — the pinned agent CLIs.

Exit codes: 0 all installed · 1 an install failed (the log tail is printed) · 2 unknown agent name.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import typer
from rich.table import Table

from .. import agents
from ..agents import InstallEvent
from ..errors import InstallError
from ._common import JSON_OPTION, console, err_console, print_json

app = typer.Typer(
    name="agents", help="Install and list the pinned agent CLIs.", no_args_is_help=True
)

NAMES_ARGUMENT = typer.Argument(
    None, help="Agent names (default: every pinned agent).", show_default=False
)
PREFIX_OPTION = typer.Option(
    None,
    "--prefix",
    help="Install root (default: $CORRAL_AGENTS_DIR or <cache dir>/agents).",
    file_okay=False,
)


def _line(event: InstallEvent) -> str:
    what = f"{event.name} {event.version}"
    if event.state == "installing":
        return f"{what}: installing…"
    if event.state == "already-installed":
        return f"{what}: already installed ({event.path})"
    if event.state == "done":
        return f"{what}: done in {event.seconds:.1f} s ({event.path})"
    return f"{what}: FAILED after {event.seconds:.1f} s: {event.message}"


_STYLE = {"installing": "cyan", "already-installed": "dim", "done": "green", "failed": "bold red"}


@app.command("install")
def install(
    names: list[str] | None = NAMES_ARGUMENT,
    prefix: Path | None = PREFIX_OPTION,
    jobs: int = typer.Option(2, "--jobs", "-j", min=1, help="Installs to run at once."),
    json_output: bool = JSON_OPTION,
) -> None:
    """Install pinned agent CLIs (a no-op for those already installed)."""
    for name in names or []:
        agents.get_pin(name)  # unknown names fail before anything starts
    lock = threading.Lock()
    out = err_console if json_output else console

    def progress(event: InstallEvent) -> None:
        with lock:
            if out.is_terminal:
                out.print(_line(event), style=_STYLE[event.state], highlight=False)
            else:
                print(_line(event), file=sys.stderr if json_output else sys.stdout, flush=True)

    results = agents.install(
        names or None, prefix=prefix, progress=progress, jobs=jobs, check=False
    )
    if json_output:
        print_json(results)
    failed = [r for r in results if r.state == "failed"]
    for result in failed:
        if result.log_tail:
            err_console.print(f"--- {result.name} log tail ---\n{result.log_tail}", highlight=False)
    if failed:
        first = failed[0]
        raise InstallError(first.name, "see the log tail above", first.log_tail)


@app.command("list")
def list_(json_output: bool = JSON_OPTION, prefix: Path | None = PREFIX_OPTION) -> None:
    """Pinned versions versus what is installed."""
    rows = agents.status(prefix=prefix)
    if json_output:
        print_json(rows)
        return
    table = Table()
    table.add_column("agent", no_wrap=True)
    table.add_column("package", overflow="fold")
    table.add_column("pinned", no_wrap=True)
    table.add_column("installed", no_wrap=True)
    table.add_column("verified", no_wrap=True)
    table.add_column("path", overflow="fold")
    for row in rows:
        installed = row.installed or "-"
        if row.installed and row.installed != row.pinned:
            installed = f"[yellow]{installed}[/]"
        path = row.path or "[red]missing[/]"
        if row.source == "path":
            path = f"{path} [yellow](PATH)[/]"
        table.add_row(
            row.name, row.package, row.pinned, installed, "yes" if row.verified else "no", path
        )
    console.print(table)
