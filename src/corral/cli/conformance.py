"""``corral conformance`` — run the conformance scenarios on the pinned real CLIs."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import typer

from ._common import JSON_OPTION, console, err_console, print_json


def register(root: typer.Typer) -> None:
    @root.command("conformance")
    def conformance(
        agents: list[str] = typer.Argument(None, help="Agents to test (default: every target)."),
        scenario: list[str] = typer.Option(
            None, "--scenario", "-s", help="Run only these scenarios (repeatable)."
        ),
        write_docs: Path | None = typer.Option(
            None, "--write-docs", help="Also write the Markdown matrix to this file."
        ),
        latest: bool = typer.Option(
            False,
            "--latest",
            help="Run on each CLI's newest release (from `corral agents install --latest`), and on "
            "the pin where they differ, and report the drift.",
        ),
        write_report: Path | None = typer.Option(
            None, "--write-report", help="With --latest: write the Markdown drift report here."
        ),
        as_json: bool = JSON_OPTION,
    ) -> None:
        """Run conformance scenarios and print the capability matrix.

        The results are also recorded per agent and CLI version in the corral home (the web
        app's settings page shows them). Exit code 1 when a scenario fails or an agent is missing.
        """
        from ..errors import ConfigError
        from ..testing._catalogue import scenario_name
        from ..testing.conformance import (
            SCENARIOS,
            Outcome,
            builtin_targets,
            compatibility_markdown,
            run_conformance,
        )

        for name in scenario or ():
            if scenario_name(name) not in SCENARIOS:  # a retired name raises, naming the new one
                raise ConfigError(
                    f"{name!r} is no conformance scenario (one of {', '.join(SCENARIOS)})"
                )
        if write_report is not None and not latest:
            raise ConfigError("--write-report needs --latest")
        if latest:
            if write_docs is not None:
                raise ConfigError("--write-docs describes the pins; it cannot go with --latest")
            from ._conformance_latest import run_latest

            run_latest(list(agents or ()), list(scenario or ()), write_report, as_json)
            return
        targets, missing = builtin_targets(list(agents) if agents else None)
        for name, why in missing.items():
            err_console.print(f"[yellow]{name}[/]: {why}")

        def show(r: object) -> None:
            if not as_json:
                from ..testing.conformance import ScenarioResult

                assert isinstance(r, ScenarioResult)
                colour = {"pass": "green", "fail": "red"}.get(r.outcome.value, "yellow")
                reason = f" — {r.reason}" if r.reason else ""
                console.print(
                    f"{r.agent:10} {r.scenario:18} [{colour}]{r.outcome.value}[/]"
                    f" ({r.seconds:.1f} s){reason}",
                    highlight=False,
                )

        results = asyncio.run(run_conformance(targets, scenario or None, on_result=show))
        _record(results)
        if as_json:
            print_json({"results": results, "missing": missing})
        if write_docs is not None:
            from .. import agents as pins

            versions = ", ".join(f"{p.name} {p.version}" for p in pins.pinned())
            header = f"Pinned CLIs: {versions}. Scripted model: `fake-model`."
            footer = _registry_sections(results)
            old = write_docs.read_text() if write_docs.is_file() else None
            page = compatibility_markdown(results, header=header, footer=footer, keep_from=old)
            write_docs.write_text(page)
            err_console.print(f"wrote {write_docs}")
        failed = any(r.outcome is Outcome.FAIL for r in results)
        raise typer.Exit(1 if failed or missing else 0)


def _registry_sections(results: Sequence[object]) -> str:
    """The page's tail: agents imported from ACP registry entries, and listed ones that cannot run."""
    from ..registry import Registry
    from ..testing.conformance import ScenarioResult

    registry = Registry()
    rows = [r for r in results if isinstance(r, ScenarioResult)]
    lines: list[str] = []
    imported = []
    for agent in dict.fromkeys(r.agent for r in rows):
        if agent not in registry:
            continue
        entry = registry.get(agent)
        origin = entry.manifest.presentation.get("acpRegistry")
        if entry.source != "custom" or not isinstance(origin, dict):
            continue
        mine = [r for r in rows if r.agent == agent]
        counts = {o: sum(r.outcome.value == o for r in mine) for o in ("pass", "fail")}
        verdict = "verified here" if counts["fail"] == 0 and counts["pass"] else "not verified"
        profile = entry.manifest.structured
        command = profile.launch_command if profile else entry.manifest.launch_command
        imported.append(
            f"- `{agent}`: registry entry `{origin.get('id')}` {origin.get('version')}, run as "
            f"`{command}` through the shared ACP driver: {verdict} "
            f"({counts['pass']} pass, {counts['fail']} fail)"
        )
    if imported:
        lines += [
            "## Imported from the ACP registry",
            "",
            "Made by `corral adapters import-acp tests/fixtures/acp_registry` from copies of real "
            "registry entries; each runs on corral's pin of its CLI.",
            "",
            *imported,
            "",
        ]
    blocked = [
        (e.id, registry.runnable(e.id).reason)
        for e in registry
        if e.source == "builtin" and not registry.runnable(e.id).runnable
    ]
    if blocked:
        lines += ["## Listed but not runnable", ""]
        lines += [f"- `{adapter_id}`: {reason}" for adapter_id, reason in blocked]
    return "\n".join(lines)


def _record(results: Sequence[object]) -> None:
    """Keep the results per agent and CLI version (the web app's settings page shows them)."""
    from .. import agents as pins
    from ..testing.conformance import ScenarioResult
    from ..testing.conformance._results import save_results
    from ..testing.conformance._targets import SPECS

    rows = [r for r in results if isinstance(r, ScenarioResult)]
    installed = {s.name: s.installed for s in pins.status()}
    versions: dict[str, str | None] = {}
    adapters: dict[str, str] = {}
    for agent in {r.agent for r in rows}:
        spec = SPECS.get(agent)
        adapters[agent] = spec.adapter if spec else agent
        versions[agent] = installed.get(spec.redirect) if spec else None
    save_results(rows, versions=versions, adapters=adapters)
