"""``corral agents install|list|pin`` — the pinned agent CLIs, and their newest releases.

Exit codes: 0 all installed · 1 an install (or a registry look-up) failed, the log tail is
printed · 2 unknown agent name or bad version.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
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
        return f"{what}: {event.message or 'already installed'} ({event.path})"
    if event.state == "done":
        return f"{what}: done in {event.seconds:.1f} s ({event.path})"
    return f"{what}: FAILED after {event.seconds:.1f} s: {event.message}"


_STYLE = {"installing": "cyan", "already-installed": "dim", "done": "green", "failed": "bold red"}


@app.command("install")
def install(
    names: list[str] | None = NAMES_ARGUMENT,
    prefix: Path | None = typer.Option(
        None,
        "--prefix",
        help="Install root (default: $CORRAL_AGENTS_DIR or <cache dir>/agents; with --latest "
        "$CORRAL_LATEST_DIR or <cache dir>/latest).",
        file_okay=False,
    ),
    jobs: int = typer.Option(2, "--jobs", "-j", min=1, help="Installs to run at once."),
    latest: bool = typer.Option(
        False,
        "--latest",
        help="Install each agent's newest release into the separate latest cache "
        "($CORRAL_LATEST_DIR or <cache dir>/latest); the pins and their installs stay as they are.",
    ),
    json_output: bool = JSON_OPTION,
) -> None:
    """Install pinned agent CLIs (a no-op for those already installed)."""
    for name in names or []:
        agents.get_pin(name)  # unknown names fail before anything starts
    progress = _progress(json_output)
    if latest:
        _install_latest(names or None, prefix, jobs, json_output, progress)
        return
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


def _progress(json_output: bool) -> Callable[[InstallEvent], None]:
    lock = threading.Lock()
    out = err_console if json_output else console

    def progress(event: InstallEvent) -> None:
        with lock:
            if out.is_terminal:
                out.print(_line(event), style=_STYLE[event.state], highlight=False)
            else:
                print(_line(event), file=sys.stderr if json_output else sys.stdout, flush=True)

    return progress


def _install_latest(
    names: list[str] | None,
    prefix: Path | None,
    jobs: int,
    json_output: bool,
    progress: Callable[[InstallEvent], None],
) -> None:
    from ..agents._latest import install_latest

    results = install_latest(names, prefix=prefix, progress=progress, jobs=jobs)
    if json_output:
        print_json(results)
    else:
        for r in results:
            if r.state == "failed":
                continue
            moved = "the pin" if r.latest == r.pinned else f"pinned {r.pinned}"
            typer.echo(f"{r.name}: newest {r.latest} ({moved}) at {r.path}")
    failed = [r for r in results if r.state == "failed"]
    for r in failed:
        tail = f"\n{r.log_tail}" if r.log_tail else ""
        err_console.print(
            f"--- {r.name} (newest {r.latest or '?'}): {r.error}{tail}", highlight=False
        )
    if failed:
        raise typer.Exit(1)


@app.command("pin")
def pin(
    name: str = typer.Argument(..., help="The pinned agent to move."),
    version: str | None = typer.Argument(None, help="The version to pin (or --latest)."),
    latest: bool = typer.Option(False, "--latest", help="Pin the registry's newest release."),
    no_install: bool = typer.Option(
        False, "--no-install", help="Only rewrite pins.toml; do not install the new pin."
    ),
    prefix: Path | None = PREFIX_OPTION,
) -> None:
    """Move one pin: install the version, then rewrite it in pins.toml (nothing else changes).

    Prints the commands that re-record that CLI's fixtures and regenerate the compatibility page.
    """
    from dataclasses import replace

    from ..agents._install import install_one
    from ..agents._latest import lookup_latest
    from ..agents._pin_edit import pins_path, set_version, write_version
    from ..errors import ConfigError

    current = agents.get_pin(name)
    if (version is None) == (not latest):
        raise ConfigError("give either a VERSION or --latest")
    wanted = version or lookup_latest(current)
    set_version(pins_path().read_text("utf-8"), name, wanted)  # refuse a bad version up front
    if not no_install:  # install first: a version that does not install leaves the pin as it was
        result = install_one(
            replace(current, version=wanted), agents.agents_root(prefix), _progress(False)
        )
        if result.state == "failed":
            err_console.print(result.log_tail or result.error or "", highlight=False)
            err_console.print(f"{name} stays pinned to {current.version}", highlight=False)
            raise typer.Exit(1)
    if wanted == current.version:
        typer.echo(f"{name} is already pinned to {wanted}")
    else:
        write_version(name, wanted)
        typer.echo(f"{pins_path()}: {name} {current.version} → {wanted}")
    typer.echo("Next, from the repository root:")
    for command in rerecord_commands(name):
        typer.echo(f"  {command}")


def rerecord_commands(name: str) -> list[str]:
    """What re-records agent ``name``'s fixtures and re-checks it, in order."""
    from ..testing.conformance._targets import SPECS

    specs = [s for s in SPECS.values() if s.redirect == name]
    commands = [f".venv/bin/corral record {s.adapter} all" for s in specs]
    if name == "codex":  # its extra modes (sub-agents, file changes) have their own recorder
        commands.append(".venv/bin/python scripts/record_codex.py")
    if specs:
        commands.append(f".venv/bin/corral record {specs[0].adapter} store")
        commands.append(
            ".venv/bin/corral conformance --write-docs docs/compatibility.md   # every target"
        )
    commands.append(f".venv/bin/python -m pytest -m realcli -k {name} tests/realcli")
    return commands


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
