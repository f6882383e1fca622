"""Agents imported from real ACP registry entries run through the shared ACP driver and conform.

``tests/fixtures/acp_registry`` holds copies of the registry's ``agent.json`` files. Each is imported
with ``corral adapters import-acp`` (the pinned CLI its package or command names is installed), and
the imported adapter, a manifest with no code of its own, runs the whole conformance suite on its
real CLI against the scripted model: no scenario may fail, and each one the shared driver can run
without optional capabilities must pass.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from corral.registry import Registry
from corral.testing import FakeModelServer, require_agent
from corral.testing.conformance import run_conformance, scenario_names
from corral.testing.conformance._scenarios import SCENARIOS
from corral.testing.conformance._targets import build_target, pinned_spec
from corral.testing.conformance._types import Outcome

FIXTURES = Path(__file__).parents[1] / "fixtures" / "acp_registry"
CORRAL = Path(sys.executable).with_name("corral")

IMPORTED = [
    # (imported id, registry entry directory, pinned CLI, seconds allowed)
    ("acp.gemini", "gemini", "gemini", 300),
    ("acp.qwen-code", "qwen-code", "qwen", 300),
    ("acp.opencode", "opencode", "opencode", 400),
]


def _import(path: Path) -> subprocess.CompletedProcess[str]:
    """``corral adapters import-acp PATH --json``, the command a user runs."""
    return subprocess.run(
        [str(CORRAL), "adapters", "import-acp", str(path), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture(scope="module")
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as fake:
        yield fake


@pytest.mark.parametrize(
    ("adapter_id", "entry", "cli"),
    [
        pytest.param(a, e, c, marks=[pytest.mark.realcli(c), pytest.mark.timeout(t)], id=a)
        for a, e, c, t in IMPORTED
    ],
)
async def test_imported_agent_conforms(
    adapter_id: str,
    entry: str,
    cli: str,
    server: FakeModelServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    require_agent(cli)
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path / "home"))
    done = await asyncio.to_thread(_import, FIXTURES / entry)
    assert done.returncode == 0, done.stderr
    (imported,) = json.loads(done.stdout)["imported"]
    assert (imported["id"], imported["pin"], imported["runnable"]) == (adapter_id, cli, True)
    registry = Registry()
    assert registry.get(adapter_id).source == "custom"
    spec = pinned_spec(adapter_id, registry)
    assert spec is not None
    target = build_target(spec, registry)
    results = await run_conformance([target], scenario_names(), server=server)
    table = "\n".join(f"  {r.scenario:18s} {r.outcome.value:12s} {r.reason or ''}" for r in results)
    assert not [r for r in results if r.outcome is Outcome.FAIL], table
    for r in results:
        capability = SCENARIOS[r.scenario].capability
        if capability is None and r.scenario not in spec.unsupported:
            assert r.outcome is Outcome.PASS, table
