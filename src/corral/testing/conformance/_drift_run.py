"""Running the suite for the drift report: each target on its CLI's newest release, and on the pin
where the two differ, with every wire tapped (``corral conformance --latest``).

The newest releases come from ``corral agents install --latest`` (``corral.agents._latest``); a
target whose newest release is the pin runs once and that run is both sides of the comparison.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ...registry import Registry
from ._drift import CliDrift, DriftReport, WireKey, compute_drift
from ._runner import run_conformance
from ._targets import SPECS, TargetSpec, build_target, pinned_spec
from ._types import ScenarioResult, Target
from ._wire import fixture_index, signature

OnResult = Callable[[str, ScenarioResult], None]
"""Called with ``"pinned"`` or ``"latest"`` and each result as it comes."""


def cli_drift(names: Sequence[str] | None = None) -> list[CliDrift]:
    """Pinned versus newest per pinned CLI, from what ``install --latest`` last found."""
    from ...agents import pinned
    from ...agents._latest import locate_latest, read_index

    index = read_index()
    rows = []
    for pin in pinned():
        if names and pin.name not in names:
            continue
        entry = index.get(pin.name)
        rows.append(
            CliDrift(
                name=pin.name,
                package=pin.package,
                pinned=pin.version,
                latest=entry.version if entry else None,
                installed=locate_latest(pin.name) is not None,
                error=(
                    entry.error if entry else "not looked up: run corral agents install --latest"
                ),
                log_tail=entry.log_tail if entry else "",
            )
        )
    return rows


def _tapped(target: Target, tape: list[tuple[str, bytes]]) -> Target:
    make = target.make_adapter

    def make_tapped(**kwargs: Any) -> Any:
        adapter = make(**kwargs)
        if hasattr(adapter, "tap"):
            adapter.tap = lambda direction, raw: tape.append((direction, raw))
        return adapter

    target.make_adapter = make_tapped
    return target


async def run_tapped(
    targets: Sequence[Target],
    scenarios: Sequence[str] | None,
    on_result: Callable[[ScenarioResult], None] | None = None,
) -> tuple[list[ScenarioResult], dict[WireKey, frozenset[str]]]:
    """Run the suite on ``targets`` with every transport tapped; results and wire signatures."""
    from .._transcript import entry

    tape: list[tuple[str, bytes]] = []
    wires: dict[WireKey, frozenset[str]] = {}

    def done(result: ScenarioResult) -> None:
        if tape:
            wires[(result.agent, result.scenario)] = signature(entry(d, raw) for d, raw in tape)
        tape.clear()
        if on_result is not None:
            on_result(result)

    tapped = [_tapped(t, tape) for t in targets]
    results = await run_conformance(tapped, scenarios, on_result=done)
    return results, wires


def _specs(
    names: Sequence[str] | None, registry: Registry
) -> tuple[list[TargetSpec], dict[str, str]]:
    specs: list[TargetSpec] = []
    skipped: dict[str, str] = {}
    for name in names or list(SPECS):
        spec = SPECS.get(name) or pinned_spec(name, registry)
        if spec is None:
            skipped[name] = "runs no pinned CLI (no newest release to compare)"
        else:
            specs.append(spec)
    return specs, skipped


def machine() -> str:
    """One line about this machine (for the report's header)."""
    try:
        load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    return (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, load average {load} at the start"
    )


async def drift(
    names: Sequence[str] | None,
    scenarios: Sequence[str] | None,
    *,
    command: str,
    fixtures_root: Path = Path("tests/fixtures/transcripts"),
    registry: Registry | None = None,
    on_result: OnResult | None = None,
) -> DriftReport:
    """Run the suite for the drift report and compute it (see the module docstring)."""
    from ...agents._latest import locate_latest

    registry = registry or Registry()
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    host = machine()
    specs, not_run = _specs(names, registry)
    clis = {c.name: c for c in cli_drift()}
    target_clis = {s.agent: s.redirect for s in specs}
    latest_targets: list[Target] = []
    pinned_targets: list[Target] = []
    for spec in specs:
        cli = clis.get(spec.redirect)
        binary = locate_latest(spec.redirect) if cli else None
        if cli is None or binary is None:
            why = cli.error if cli and cli.error else "its newest release is not installed"
            not_run[spec.agent] = f"{spec.redirect} {cli.latest if cli else '?'}: {why}"
            continue
        try:
            latest_targets.append(build_target(spec, registry, binary=str(binary)))
            if cli.moved:
                pinned_targets.append(build_target(spec, registry))
        except Exception as exc:  # an adapter the registry cannot resolve: say so, go on
            not_run[spec.agent] = f"{type(exc).__name__}: {exc}"

    def tell(side: str) -> Callable[[ScenarioResult], None]:
        return lambda r: on_result(side, r) if on_result is not None else None

    latest, latest_wires = await run_tapped(latest_targets, scenarios, tell("latest"))
    pinned, pinned_wires = await run_tapped(pinned_targets, scenarios, tell("pinned"))
    moved_targets = {t.agent for t in pinned_targets}
    # A target whose newest release is the pin ran once: that run is both sides.
    pinned += [r for r in latest if r.agent not in moved_targets]
    pinned_wires.update({k: v for k, v in latest_wires.items() if k[0] not in moved_targets})
    return compute_drift(
        clis=list(clis.values()),
        target_clis={**target_clis, **{n: n for n in not_run if n not in target_clis}},
        pinned_results=pinned,
        latest_results=latest,
        not_run=not_run,
        pinned_wires=pinned_wires,
        latest_wires=latest_wires,
        fixtures=fixture_index(fixtures_root),
        generated_at=started,
        machine=host,
        command=command,
    )
