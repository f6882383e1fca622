"""Record any conformance target's raw traffic against the scripted model server, as a fixture.

    corral record AGENT SCENARIO|all [--out tests/fixtures/transcripts]

``AGENT`` is a conformance target (or its adapter id) whose adapter has a transport ``tap``
(claude-code, qwen, the ACP agents, codex, codex-exec, …) and ``SCENARIO`` a conformance scenario
of the one catalogue (``all``: every one the target can run). The
scenario runs through the real adapter with the tap on; every line in both directions is written
to ``OUT/<agent>/<version>/<scenario>.jsonl``::

    {"dir": "in",  "line": {...}}     a line corral wrote to the agent's stdin
    {"dir": "out", "line": {...}}     a line the agent printed on stdout
    {"dir": "out", "text": "..."}     a stdout line that was not JSON, verbatim
    {"dir": "exit", "code": 0}        the agent process exited (resume scenarios start another)

and ``<scenario>.meta.json`` holds the CLI version, scenario, argv, date and outcome. A scenario
that does not pass is not written: fixtures record behaviour the driver handles.
"""

from __future__ import annotations

from collections.abc import Sequence
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
        result = msg.get("result") if isinstance(msg, dict) else None
        info = result.get("agentInfo") if isinstance(result, dict) else None
        if isinstance(info, dict) and info.get("version"):
            return str(info["version"])
    return fallback


def spec_for(agent: str) -> Any:
    """The conformance target spec named ``agent``, or the one whose adapter id it is."""
    from ..testing.conformance._targets import SPECS

    spec = SPECS.get(agent) or next((s for s in SPECS.values() if s.adapter == agent), None)
    if spec is None:
        raise ConfigError(f"{agent} has no conformance target to record through")
    return spec


async def record(
    agent: str, scenario: str, out: Path = DEFAULT_OUT, *, binary: str | None = None
) -> Path:
    """Run ``scenario`` on ``agent`` (a target or adapter id) and write its fixture.

    Returns the ``.jsonl`` path; ``binary`` replaces the pinned CLI."""
    from ..agents import get_pin
    from ..testing.conformance._runner import run_scenario
    from ..testing.conformance._scenarios import SCENARIOS
    from ..testing.conformance._targets import build_target
    from ..testing.conformance._types import Outcome
    from ..testing.fake_model import FakeModelServer

    spec = spec_for(agent)
    if scenario not in SCENARIOS:
        raise ConfigError(f"{scenario!r} is no recordable scenario of {agent}")
    agent = spec.agent
    target = build_target(spec, binary=binary)
    lines: list[tuple[Direction, bytes]] = []
    argvs: list[list[str]] = []
    make = target.make_adapter

    def make_tapped(**kwargs: Any) -> Any:
        adapter = make(**kwargs)
        if not hasattr(adapter, "tap"):
            raise ConfigError(f"{agent}'s adapter has no transport tap to record from")
        adapter.tap = lambda direction, raw: lines.append((direction, raw))
        factory = getattr(adapter, "transport_factory", None)
        if callable(factory):  # a line driver: note the argv of every process it starts

            def noting(argv: Sequence[str], **options: Any) -> Any:
                argvs.append(list(argv))
                return factory(argv, **options)

            adapter.transport_factory = noting  # type: ignore[attr-defined]
        elif callable(build_launch := getattr(adapter, "build_launch", None)):
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
        "command": f"corral record {spec.adapter} {scenario} --out {out}",
    }
    return transcript.write(out, agent, version, scenario, [entry(d, r) for d, r in lines], meta)


def scenario_names(agent: str, wanted: str) -> list[str]:
    """Conformance scenarios to record for ``agent``: ``wanted``, or for ``all`` every one it runs."""
    from ..testing.conformance._runner import declared
    from ..testing.conformance._scenarios import SCENARIOS
    from ..testing.conformance._targets import build_target

    if wanted != "all":
        return [wanted]
    target = build_target(spec_for(agent))
    return [
        n
        for n, s in SCENARIOS.items()
        if n not in target.unsupported and declared(target, s) is not False
    ]
