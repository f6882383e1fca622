"""The drift report: the suite on each pinned CLI's newest release, against the pin.

Computed from two sets of conformance results (pinned and newest), the wire signature of every
scenario run (``_wire.signature``) and the fixture index, by :func:`compute_drift`; shown by
:func:`drift_markdown` (``docs/drift.md``) or as JSON. Nothing here runs a CLI.

Per target and scenario the outcome on the pin and on the newest release are compared; the wire
is compared where both runs captured one (a transport ``tap``). A fixture of a CLI whose newest
release is not the pin *needs re-recording* when its scenario's outcome or wire changed; one whose
scenario kept both can be re-recorded as it is; one the suite does not cover (a session store, a
recorder-only scenario) must be re-recorded and checked by its own tests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from ._types import ScenarioResult
from ._wire import Fixture

WireKey = tuple[str, str]
"""(target, scenario)."""


class CliDrift(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    package: str
    pinned: str
    latest: str | None
    """The registry's newest version (``None``: the look-up failed)."""
    installed: bool
    """The newest release is installed and ran its ``--version`` (or is the pin)."""
    error: str | None = None
    log_tail: str = ""

    @property
    def moved(self) -> bool:
        return self.latest is not None and self.latest != self.pinned


class ScenarioDrift(msgspec.Struct, frozen=True, kw_only=True):
    scenario: str
    pinned: str | None
    """The outcome on the pin (``None``: not run)."""
    latest: str | None
    pinned_reason: str | None = None
    latest_reason: str | None = None
    wire: str = "not compared"
    """``same`` · ``changed`` · ``not compared`` (a run without a tap, or not run)."""
    wire_added: list[str] = msgspec.field(default_factory=list)
    wire_removed: list[str] = msgspec.field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.pinned != self.latest or self.wire == "changed"


class TargetDrift(msgspec.Struct, frozen=True, kw_only=True):
    target: str
    cli: str
    pinned: str
    latest: str | None
    ran: bool
    """The suite ran on the newest release."""
    reason: str | None = None
    """Why it did not run."""
    scenarios: list[ScenarioDrift] = msgspec.field(default_factory=list)

    def count(self, outcome: str) -> int:
        return sum(s.latest == outcome for s in self.scenarios)


class FixtureDrift(msgspec.Struct, frozen=True, kw_only=True):
    path: str
    target: str
    scenario: str
    verdict: str
    """``result changed`` · ``wire changed`` · ``same wire`` · ``not covered`` · ``unknown``."""
    command: str


class DriftReport(msgspec.Struct, frozen=True, kw_only=True):
    generated_at: str
    machine: str
    command: str
    clis: list[CliDrift]
    targets: list[TargetDrift]
    fixtures: list[FixtureDrift]
    """Fixtures of every CLI whose newest release is not the pin."""
    current_fixtures: int = 0
    """Fixtures of CLIs whose newest release is the pin (nothing to re-record)."""


def _wire(
    key: WireKey,
    pinned: Mapping[WireKey, frozenset[str]],
    latest: Mapping[WireKey, frozenset[str]],
) -> tuple[str, list[str], list[str]]:
    old, new = pinned.get(key), latest.get(key)
    if not old or not new:
        return "not compared", [], []
    if old == new:
        return "same", [], []
    return "changed", sorted(new - old), sorted(old - new)


def compute_drift(
    *,
    clis: Sequence[CliDrift],
    target_clis: Mapping[str, str],
    pinned_results: Sequence[ScenarioResult],
    latest_results: Sequence[ScenarioResult],
    not_run: Mapping[str, str],
    pinned_wires: Mapping[WireKey, frozenset[str]],
    latest_wires: Mapping[WireKey, frozenset[str]],
    fixtures: Sequence[Fixture],
    generated_at: str,
    machine: str,
    command: str,
) -> DriftReport:
    """The report. ``target_clis``: target → pin name, for every target asked for (run or not);
    ``not_run``: target → why the newest release was not run."""
    by_cli = {c.name: c for c in clis}
    old = {(r.agent, r.scenario): r for r in pinned_results}
    new = {(r.agent, r.scenario): r for r in latest_results}
    targets: list[TargetDrift] = []
    for target, cli_name in target_clis.items():
        cli = by_cli.get(cli_name)
        names = list(
            dict.fromkeys(s for (t, s) in [*old, *new] if t == target)
        )  # suite order, as run
        rows = []
        for scenario in names:
            before, after = old.get((target, scenario)), new.get((target, scenario))
            wire, added, removed = _wire((target, scenario), pinned_wires, latest_wires)
            rows.append(
                ScenarioDrift(
                    scenario=scenario,
                    pinned=before.outcome.value if before else None,
                    latest=after.outcome.value if after else None,
                    pinned_reason=before.reason if before else None,
                    latest_reason=after.reason if after else None,
                    wire=wire,
                    wire_added=added,
                    wire_removed=removed,
                )
            )
        targets.append(
            TargetDrift(
                target=target,
                cli=cli_name,
                pinned=cli.pinned if cli else "?",
                latest=cli.latest if cli else None,
                ran=target not in not_run,
                reason=not_run.get(target),
                scenarios=rows,
            )
        )
    return DriftReport(
        generated_at=generated_at,
        machine=machine,
        command=command,
        clis=list(clis),
        targets=targets,
        fixtures=_fixture_verdicts(targets, by_cli, fixtures),
        current_fixtures=sum(
            1 for f in fixtures if (c := by_cli.get(f.cli)) is not None and not c.moved
        ),
    )


def _fixture_verdicts(
    targets: Sequence[TargetDrift], clis: Mapping[str, CliDrift], fixtures: Sequence[Fixture]
) -> list[FixtureDrift]:
    rows = {(t.target, s.scenario): s for t in targets for s in t.scenarios}
    ran = {t.target: t.ran for t in targets}
    out: list[FixtureDrift] = []
    for f in fixtures:
        cli = clis.get(f.cli)
        if cli is None or not cli.moved or f.version != cli.pinned:
            continue
        row = rows.get((f.target, f.scenario))
        if not ran.get(f.target, False):
            verdict = "unknown"
        elif row is None or row.latest is None:
            verdict = "not covered"
        elif row.pinned != row.latest:
            verdict = "result changed"
        elif row.wire == "changed":
            verdict = "wire changed"
        elif row.wire == "same":
            verdict = "same wire"
        else:
            verdict = "not covered"
        out.append(
            FixtureDrift(
                path=f.path,
                target=f.target,
                scenario=f.scenario,
                verdict=verdict,
                command=f.command,
            )
        )
    return out


_MARK = {"pass": "✅ pass", "fail": "❌ fail", "unsupported": "— unsupported", None: "not run"}
_VERDICT = {
    "result changed": "re-record (the outcome changed)",
    "wire changed": "re-record (the wire changed)",
    "same wire": "re-record as is (same outcome, same wire)",
    "not covered": "re-record and check with its own tests (the suite does not cover it)",
    "unknown": "unknown (the suite did not run this target on the newest release)",
}


def _cell(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")[:300]


def drift_markdown(report: DriftReport) -> str:
    """``docs/drift.md``: the CLIs, the suite on each newest release, what changed, the fixtures."""
    moved = [c for c in report.clis if c.moved]
    lines = [
        "# Drift against the newest releases",
        "",
        f"Generated by `{report.command}` on {report.generated_at} ({report.machine}), after "
        "`corral agents install --latest`. Do not edit by hand; how to move a pin is in "
        "[agents](agents.md#moving-a-pin).",
        "",
        "## The pinned CLIs and their newest releases",
        "",
        "| agent | package | pinned | newest | newest release |",
        "|---|---|---|---|---|",
    ]
    for c in report.clis:
        if c.latest is None:
            state = f"look-up failed: {_cell(c.error)}"
        elif not c.moved:
            state = "is the pin"
        elif c.installed:
            state = "installed, suite run"
        else:
            state = f"not installable: {_cell(c.error)}"
        lines.append(f"| {c.name} | `{c.package}` | {c.pinned} | {c.latest or '?'} | {state} |")
    lines += [
        "",
        "## The suite on the newest releases",
        "",
        "On the newest release; a target whose newest release is the pin ran once, and that run "
        "is both sides. *Changed*: the scenario's outcome or its wire differs from the pin's.",
        "",
        "| target | CLI | pinned → newest | pass | fail | unsupported | changed |",
        "|---|---|---|---|---|---|---|",
    ]
    for t in report.targets:
        version = f"{t.pinned} → {t.latest or '?'}" if t.latest != t.pinned else t.pinned
        if not t.ran:
            lines.append(f"| {t.target} | {t.cli} | {version} | | | | not run: {_cell(t.reason)} |")
            continue
        changed = ", ".join(s.scenario for s in t.scenarios if s.changed) or "none"
        lines.append(
            f"| {t.target} | {t.cli} | {version} | {t.count('pass')} | {t.count('fail')} | "
            f"{t.count('unsupported')} | {changed} |"
        )
    lines += _changes(report)
    lines += _fixtures(report, moved)
    failed = [c for c in report.clis if c.moved and not c.installed]
    if failed:
        lines += ["", "## Newest releases that could not be installed", ""]
        for c in failed:
            lines += [f"### {c.name} {c.latest}", "", f"{c.error}", ""]
            if c.log_tail:
                lines += ["```text", c.log_tail, "```", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _changes(report: DriftReport) -> list[str]:
    lines: list[str] = []
    for t in report.targets:
        if not t.ran or t.latest == t.pinned:
            continue
        lines += [
            "",
            f"## {t.target}: {t.cli} {t.pinned} → {t.latest}",
            "",
            "| scenario | pinned | newest | wire |",
            "|---|---|---|---|",
        ]
        notes: list[str] = []
        for s in t.scenarios:
            wire = s.wire
            if s.wire == "changed":
                notes.append(
                    f"- {s.scenario}: the wire "
                    + "; ".join(
                        part
                        for part in (
                            "gained " + ", ".join(f"`{k}`" for k in s.wire_added)
                            if s.wire_added
                            else "",
                            "lost " + ", ".join(f"`{k}`" for k in s.wire_removed)
                            if s.wire_removed
                            else "",
                        )
                        if part
                    )
                )
            if s.pinned != s.latest and s.latest_reason:
                notes.append(f"- {s.scenario} on {t.latest}: {_cell(s.latest_reason)}")
            lines.append(f"| {s.scenario} | {_MARK[s.pinned]} | {_MARK[s.latest]} | {wire} |")
        if notes:
            lines += ["", *notes]
    return lines


def _fixtures(report: DriftReport, moved: Sequence[CliDrift]) -> list[str]:
    lines = ["", "## Fixtures", ""]
    names = ", ".join(f"{c.name} {c.pinned} → {c.latest}" for c in moved) or "none"
    lines.append(
        f"Recorded fixtures of the CLIs whose newest release is not the pin ({names}); "
        f"{report.current_fixtures} fixtures of the other CLIs are current. Moving a pin re-records "
        "them all into the new version's directory; the verdict says what to expect."
    )
    if not report.fixtures:
        return lines
    counts: dict[str, int] = {}
    for f in report.fixtures:
        counts[f.verdict] = counts.get(f.verdict, 0) + 1
    lines += ["", ", ".join(f"{n} {v}" for v, n in counts.items()) + ".", ""]
    lines += ["| fixture | verdict | re-record with |", "|---|---|---|"]
    order = list(_VERDICT)
    for f in sorted(report.fixtures, key=lambda f: (order.index(f.verdict), f.path)):
        lines.append(f"| `{f.path}` | {_VERDICT[f.verdict]} | `{f.command}` |")
    return lines
