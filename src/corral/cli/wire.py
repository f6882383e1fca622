"""``corral wire AGENT PROJECT`` / ``corral unwire AGENT PROJECT``: live-session reporting.

``wire`` installs the agent's observer (hooks or a plugin) into the project so its interactive
sessions POST seed-002 v1 events to the board of ``corral serve``; the emitters send the bearer
token read from ``home_dir()/token``. Idempotent: a second ``wire`` changes nothing. ``--dry-run``
shows what would change. Every edit is recorded so ``unwire`` restores the files byte for byte.

Exit codes: 0 wired / unwired / nothing to do · 1 unwire refused a file that changed since it was
wired · 2 bad usage (unknown agent, unreadable settings).
"""

from __future__ import annotations

from pathlib import Path

import typer

from ..board import _wire
from ._common import JSON_OPTION, console, print_json

_URL_OPTION = typer.Option(
    "http://127.0.0.1:8765",
    "--url",
    help="The board's address (corral serve); BOARD_PORT overrides.",
)


def register(root: typer.Typer) -> None:
    @root.command("wire")
    def wire(
        agent: str = typer.Argument(
            ..., help="Agent (claude-code, opencode, codex, gemini, qwen…)."
        ),
        project: Path = typer.Argument(..., help="The project's root directory."),
        dry_run: bool = typer.Option(False, "--dry-run", help="Show the changes, write nothing."),
        url: str = _URL_OPTION,
        json_out: bool = JSON_OPTION,
    ) -> None:
        """Make an agent's interactive sessions in PROJECT report live to the board."""
        wire_plan = _wire.plan(agent, project, url=url)
        entries = [] if dry_run else _wire.apply(wire_plan)
        files = [str(e.path.relative_to(wire_plan.project)) for e in wire_plan.edits]
        if json_out:
            print_json(
                {
                    "agent": wire_plan.agent,
                    "project": str(wire_plan.project),
                    "observable": wire_plan.observable,
                    "dry_run": dry_run,
                    "changed": files,
                    "edits": entries,
                    "message": wire_plan.message,
                }
            )
            return
        console.print(wire_plan.message, highlight=False)
        for name in files:
            console.print(f"  {'would write' if dry_run else 'wrote'} {name}", highlight=False)
        for path in wire_plan.unchanged:
            console.print(f"  unchanged {path.relative_to(wire_plan.project)}", highlight=False)

    @root.command("unwire")
    def unwire(
        agent: str = typer.Argument(..., help="Agent that was wired."),
        project: Path = typer.Argument(..., help="The project's root directory."),
        force: bool = typer.Option(
            False, "--force", help="Restore files even if they changed since they were wired."
        ),
        json_out: bool = JSON_OPTION,
    ) -> None:
        """Take live-session reporting out of PROJECT, restoring its files exactly."""
        results = _wire.unwire(_wire.canonical(agent), project, force=force)
        if json_out:
            print_json([r.__dict__ for r in results])
        elif not results:
            console.print(f"{agent}: nothing wired in {project}", highlight=False)
        for r in results if not json_out else ():
            reason = f" ({r.reason})" if r.reason else ""
            console.print(f"  {r.action} {r.path}{reason}", highlight=False)
        if any(r.action == "refused" for r in results):
            raise typer.Exit(1)
