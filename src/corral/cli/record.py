"""``corral record AGENT SCENARIO --out DIR``: record a real CLI's protocol lines as a fixture.

See :mod:`corral.testing._record_targets` for the file layout. ``all`` records every scenario the
agent's target can run; ``store`` records the CLI's on-disk session store instead
(:mod:`corral.testing._record_stores`). SCENARIO is a name of the one catalogue
(:mod:`corral.testing._catalogue`); a retired name (``cancel``, ``image``, ``api-error``, …) is
refused with the name that replaced it. Exit codes: 0 recorded · 1 the run failed · 2 bad usage
(unknown or retired scenario) · 4 unknown agent.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer

from ..errors import ConfigError
from ._common import console, err_console

_OUT_OPTION = typer.Option(
    Path("tests/fixtures/transcripts"), "--out", help="Fixture root directory."
)


def register(root: typer.Typer) -> None:
    @root.command("record")
    def record(
        agent: str = typer.Argument(..., help="Adapter id (claude-code, qwen, codex, gemini, …)."),
        scenario: str = typer.Argument(
            ...,
            help="Scenario name (see docs/testing.md, 'One scenario catalogue'), 'all', or 'store'"
            " (the CLI's session store).",
        ),
        out: Path = _OUT_OPTION,
        binary: str | None = typer.Option(
            None, "--binary", help="CLI executable (default: the pinned one)."
        ),
    ) -> None:
        """Run SCENARIO on the real AGENT CLI against the scripted model and store its protocol lines."""
        from ..registry import Registry
        from ..testing import _record_ocpi, _record_stores, _record_targets
        from ..testing._catalogue import scenario_name

        if scenario != _record_stores.SCENARIO:
            scenario = scenario_name(scenario)
        cls = Registry().resolve(agent)
        if scenario == _record_stores.SCENARIO:
            # The vendor's on-disk session store after two headless turns (hand-off fixtures).
            try:
                meta = _record_stores.record(cls.agent_id, out, binary=binary)
            except ConfigError as exc:
                err_console.print(f"not recorded: {exc}")
                raise typer.Exit(1) from None
            console.print(f"recorded {meta}")
            return
        if cls.agent_id in ("opencode", "pi") and _record_ocpi.scenario_names(agent, scenario):
            # The OpenCode-server / Pi-RPC recorder scenarios (parser fixtures of those drivers).
            if binary is not None:
                raise ConfigError(f"--binary is not supported when recording {agent}")
            for name in _record_ocpi.scenario_names(agent, scenario):
                console.print(f"recorded {asyncio.run(_record_ocpi.record(agent, name, out))}")
            return
        # Every other driver records its conformance scenarios through its target's transport tap.
        failed = False
        for name in _record_targets.scenario_names(cls.agent_id, scenario):
            try:
                path = asyncio.run(_record_targets.record(cls.agent_id, name, out, binary=binary))
            except ConfigError as exc:
                err_console.print(f"not recorded: {exc}")
                failed = True
                continue
            console.print(f"recorded {path}")
        raise typer.Exit(1 if failed else 0)
