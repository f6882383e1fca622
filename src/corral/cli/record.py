"""``corral record AGENT SCENARIO --out DIR``: record a real CLI's protocol lines as a fixture.

See :mod:`corral.testing._recorder` for the file layout; ``store`` records the CLI's on-disk
session store instead (:mod:`corral.testing._record_stores`). ``--all`` records every scenario the agent's
capabilities allow. Exit codes: 0 recorded · 1 the run failed · 2 bad usage · 4 unknown agent.
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
            ..., help="Scenario name, 'all', or 'store' (the CLI's session store)."
        ),
        out: Path = _OUT_OPTION,
        binary: str | None = typer.Option(
            None, "--binary", help="CLI executable (default: the pinned one)."
        ),
    ) -> None:
        """Run SCENARIO on the real AGENT CLI against the scripted model and store its protocol lines."""
        from ..registry import Registry
        from ..testing import _record_ocpi, _record_stores, _record_targets
        from ..testing._agent_scenarios import SCENARIOS
        from ..testing._recorder import record as record_one

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
            for name in _record_ocpi.scenario_names(agent, scenario):
                console.print(f"recorded {asyncio.run(_record_ocpi.record(agent, name, out))}")
            return
        if cls.agent_id not in ("claude-code", "qwen"):
            # Every other driver records conformance scenarios through its target's transport tap.
            failed = False
            for name in _record_targets.scenario_names(agent, scenario):
                try:
                    path = asyncio.run(_record_targets.record(agent, name, out))
                except ConfigError as exc:
                    err_console.print(f"not recorded: {exc}")
                    failed = True
                    continue
                console.print(f"recorded {path}")
            raise typer.Exit(1 if failed else 0)
        names = list(SCENARIOS) if scenario == "all" else [scenario]
        for name in names:
            missing = (
                [c for c in SCENARIOS[name].requires if not getattr(cls, f"cap_{c}")]
                if name in SCENARIOS
                else []
            )
            if missing:
                err_console.print(f"skip {name}: {agent} lacks {', '.join(missing)}")
                continue
            path = asyncio.run(record_one(cls, name, out, binary=binary))
            console.print(f"recorded {path}")
