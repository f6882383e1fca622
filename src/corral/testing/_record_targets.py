"""Record any conformance target's raw traffic against the scripted model server, as a fixture.

    corral record AGENT SCENARIO|all [--out tests/fixtures/transcripts]

``AGENT`` is a conformance target whose adapter has a transport ``tap`` (the ACP agents, codex,
codex-exec, …) and ``SCENARIO`` a conformance scenario (``all``: every one the target can run). The
scenario runs through the real adapter with the tap on; every line in both directions is written
to ``OUT/<agent>/<version>/<scenario>.jsonl`` in the layout of :mod:`corral.testing._recorder`::

    {"dir": "in",  "line": {...}}     a line corral wrote to the agent's stdin
    {"dir": "out", "line": {...}}     a line the agent printed on stdout
    {"dir": "out", "text": "..."}     a stdout line that was not JSON, verbatim
    {"dir": "exit", "code": 0}        the agent process exited (resume scenarios start another)

and ``<scenario>.meta.json`` holds the CLI version, scenario, argv, date and outcome. A scenario
that does not pass is not written: fixtures record behaviour the driver handles.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from .._process import Direction
from .._version import __version__
from ..errors import ConfigError
from . import _transcript as transcript
from ._transcript import entry

DEFAULT_OUT = Path("tests/fixtures/transcripts")


def _version(lines: list[tuple[Direction, bytes]], fallback: str) -> str:
    """The version the agent reported in an ACP ``initialize`` result, else ``fallback``."""
    for direction, raw in lines:
        if direction != "out":
            continue
        try:
            msg = msgspec.json.decode(raw)
        except msgspec.DecodeError:
            continue
        info = msg.get("result", {}).get("agentInfo") if isinstance(msg, dict) else None
        if isinstance(msg.get("result"), dict) and isinstance(info, dict) and info.get("version"):
            return str(info["version"])
    return fallback


async def record(agent: str, scenario: str, out: Path = DEFAULT_OUT) -> Path:
    """Run ``scenario`` on ``agent`` and write its fixture; returns the ``.jsonl`` path."""
    from ..agents import get_pin
    from ..testing.conformance._runner import run_scenario
    from ..testing.conformance._scenarios import SCENARIOS
    from ..testing.conformance._targets import SPECS, build_target
    from ..testing.conformance._types import Outcome
    from ..testing.fake_model import FakeModelServer

    spec = SPECS.get(agent)
    if spec is None or scenario not in SCENARIOS:
        raise ConfigError(f"unknown agent or scenario: {agent} {scenario}")
    target = build_target(spec)
    lines: list[tuple[Direction, bytes]] = []
    argvs: list[list[str]] = []
    make = target.make_adapter

    def make_tapped(**kwargs: Any) -> Any:
        adapter = make(**kwargs)
        if not hasattr(adapter, "tap"):
            raise ConfigError(f"{agent}'s adapter has no transport tap to record from")
        adapter.tap = lambda direction, raw: lines.append((direction, raw))
        build_launch = getattr(adapter, "build_launch", None)
        if callable(build_launch):
            argvs.append(list(build_launch().argv))
        return adapter

    target.make_adapter = make_tapped
    async with FakeModelServer() as server:
        result = await run_scenario(target, SCENARIOS[scenario], server)
        requests = len(server.requests)
    if result.outcome is not Outcome.PASS:
        raise ConfigError(f"{agent} {scenario}: {result.outcome.value} ({result.reason})")
    version = _version(lines, get_pin(spec.redirect).version)
    meta = {
        "cli": spec.redirect,
        "agent": agent,
        "version": version,
        "scenario": scenario,
        "script": target.script_for(SCENARIOS[scenario]),
        "argv": argvs,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "outcome": result.outcome.value,
        "model_requests": requests,
        "corral": __version__,
        "command": f"corral record {agent} {scenario} --out {out}",
    }
    return transcript.write(out, agent, version, scenario, [entry(d, r) for d, r in lines], meta)


def scenario_names(agent: str, wanted: str) -> list[str]:
    """Conformance scenarios to record for ``agent``: ``wanted``, or for ``all`` every one it runs."""
    from ..testing.conformance._runner import declared
    from ..testing.conformance._scenarios import SCENARIOS
    from ..testing.conformance._targets import SPECS, build_target

    if wanted != "all":
        return [wanted]
    target = build_target(SPECS[agent])
    return [
        n
        for n, s in SCENARIOS.items()
        if n not in target.unsupported and declared(target, s) is not False
    ]
