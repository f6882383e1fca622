"""Conformance results kept per agent and CLI version, for the web app's settings page.

``corral conformance`` records every run in ``home_dir()/state/conformance.json``: per conformance
target, the adapter id, the CLI version the run used, when, and one result per scenario. A later
run of the same version replaces the scenarios it ran and keeps the others; a run of another
version starts the agent's entry afresh (results never carry over between versions).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from ..._paths import FILE_MODE, home_dir
from ._types import ScenarioResult

RESULTS_FILE = ("state", "conformance.json")


class AgentResults(msgspec.Struct, frozen=True, kw_only=True):
    agent: str
    """The conformance target name (``claude``, ``qwen-acp``, …)."""
    adapter_id: str | None
    version: str | None
    """The CLI version the results are for (``None``: unknown)."""
    ran_at: datetime
    results: list[ScenarioResult]


def results_path(home: Path | None = None) -> Path:
    return (home if home is not None else home_dir()).joinpath(*RESULTS_FILE)


def load_results(home: Path | None = None) -> dict[str, AgentResults]:
    """Every recorded agent's results; a missing or unreadable file is no results."""
    try:
        raw = results_path(home).read_bytes()
        return msgspec.json.decode(raw, type=dict[str, AgentResults])
    except (OSError, msgspec.MsgspecError):
        return {}


def save_results(
    results: Sequence[ScenarioResult],
    *,
    versions: Mapping[str, str | None],
    adapters: Mapping[str, str],
    home: Path | None = None,
) -> dict[str, AgentResults]:
    """Merge ``results`` (``versions`` / ``adapters``: per agent) into the stored ones."""
    stored = load_results(home)
    now = datetime.now(UTC)
    by_agent: dict[str, list[ScenarioResult]] = {}
    for r in results:
        by_agent.setdefault(r.agent, []).append(r)
    for agent, fresh in by_agent.items():
        version = versions.get(agent)
        old = stored.get(agent)
        kept = [] if old is None or old.version != version else old.results
        ran = {r.scenario for r in fresh}
        merged = [r for r in kept if r.scenario not in ran] + fresh
        stored[agent] = AgentResults(
            agent=agent, adapter_id=adapters.get(agent), version=version, ran_at=now, results=merged
        )
    path = results_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(msgspec.json.encode(stored))
    tmp.chmod(FILE_MODE)
    tmp.replace(path)
    return stored
