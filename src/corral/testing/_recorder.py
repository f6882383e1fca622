"""Record a real agent CLI's protocol traffic against the scripted model server.

``corral record AGENT SCENARIO --out DIR`` runs one :mod:`~corral.testing._agent_scenarios` scenario
through the adapter with the transport tap on, the fake model server started in-process, an
isolated HOME and a fresh git repository as the working directory. It writes:

``DIR/<cli>/<version>/<scenario>.jsonl``
    one JSON object per protocol line, in the order the driver saw them::

        {"dir": "in",  "line": {...}}    a line corral wrote to the CLI's stdin
        {"dir": "out", "line": {...}}    a line the CLI printed on stdout
        {"dir": "out", "text": "..."}    a stdout line that was not JSON (kept verbatim)
        {"dir": "exit", "code": 0}       the CLI process exited (a scenario may restart it)

``DIR/<cli>/<version>/<scenario>.meta.json``
    the CLI name and version, adapter id, scenario (and its fake-model script), argv, date, the
    number of model requests, and the corral version.

These files are the only parser fixtures corral accepts; none is written by hand.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .. import agents
from .._version import __version__
from ..adapters.base import BaseAdapter, accepts, parse_version
from ..errors import ConfigError
from ..redirect import redirect_for
from . import _transcript as transcript
from ._agent_scenarios import SCENARIOS, AgentScenario
from ._transcript import Tape
from .conformance._session import LiveSession
from .fake_model import FakeModelServer

_PASSTHROUGH = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR")
MODEL = "fake-model"
API_KEY = "corral-test-key"


@dataclass
class ScenarioRun:
    """What one scenario run left behind: the driver (events), the model's requests, the workspace."""

    scenario: AgentScenario
    driver: LiveSession
    server: FakeModelServer
    cwd: Path
    home: Path
    argv: tuple[str, ...] = ()


@contextmanager
def workspace() -> Iterator[tuple[Path, Path]]:
    """A temporary (home, git repository) pair, removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix="corral-scenario-"))
    try:
        home, repo = root / "home", root / "repo"
        home.mkdir()
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        yield home, repo
    finally:
        shutil.rmtree(root, ignore_errors=True)


def redirection(cli: str, base_url: str, home: Path) -> tuple[dict[str, str], tuple[str, ...]]:
    """Env and argv that point ``cli`` at the fake server, with its state under ``home``."""
    redir = redirect_for(cli, base_url=base_url, model=MODEL, api_key=API_KEY, home=home)
    redir.apply()
    return dict(redir.env), tuple(redir.argv)


def clean_env() -> dict[str, str]:
    """What a scenario's CLI inherits from us: PATH and locale, never keys or the real HOME."""
    return {k: os.environ[k] for k in _PASSTHROUGH if k in os.environ} | {"NO_COLOR": "1"}


def locate(cli: str) -> str:
    path = agents.locate(cli)
    if path is None:
        raise ConfigError(f"{cli} is not installed (run `corral agents install {cli}`)")
    return str(path)


def cli_version(binary: str) -> str:
    out = subprocess.run(
        [binary, "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    return parse_version(out.stdout + out.stderr) or "unknown"


async def run_scenario(
    adapter_cls: type[BaseAdapter],
    scenario: AgentScenario,
    *,
    server: FakeModelServer,
    home: Path,
    cwd: Path,
    binary: str | None = None,
    tap: Any = None,
    extra: Mapping[str, Any] | None = None,
) -> ScenarioRun:
    """Play ``scenario`` on a fresh adapter against ``server``; the session is stopped at the end."""
    cli = adapter_cls.cli_binary or adapter_cls.agent_id
    env, argv = redirection(cli, server.base_url, home)
    kwargs: dict[str, Any] = {
        "cwd": str(cwd),
        "binary": binary or locate(cli),
        "env": env,
        "extra_args": argv,
        "permission_mode": scenario.permission_mode,
        "tap": tap,
        "base_env": clean_env(),
        **(extra or {}),
    }
    # Only what the adapter's __init__ takes (pi, for one, has no permission mode).
    adapter = adapter_cls(**{k: v for k, v in kwargs.items() if accepts(adapter_cls, k)})
    driver = LiveSession(adapter, "scenario", approve=scenario.approve, answer=scenario.answer)
    try:
        await driver.start()
        await scenario.drive(driver)
    finally:
        await driver.close()
    return ScenarioRun(
        scenario=scenario, driver=driver, server=server, cwd=cwd, home=home, argv=argv
    )


async def record(
    adapter_cls: type[BaseAdapter], scenario_name: str, out: Path, *, binary: str | None = None
) -> Path:
    """Record ``scenario_name`` from the real CLI into ``out``; returns the ``.jsonl`` path."""
    try:
        scenario = SCENARIOS[scenario_name]
    except KeyError:
        raise ConfigError(
            f"no scenario {scenario_name!r} (one of {', '.join(SCENARIOS)})"
        ) from None
    cli = adapter_cls.cli_binary or adapter_cls.agent_id
    binary = binary or locate(cli)
    version = cli_version(binary)
    tape = Tape()
    with workspace() as (home, cwd), FakeModelServer(scenario.model) as server:
        run = await run_scenario(
            adapter_cls,
            scenario,
            server=server,
            home=home,
            cwd=cwd,
            binary=binary,
            tap=tape.tap,
        )
        requests = len(server.requests.model_calls())
    meta = {
        "cli": cli,
        "version": version,
        "adapter": adapter_cls.agent_id,
        "scenario": scenario_name,
        "description": scenario.description,
        "model_scenario": scenario.model,
        "permission_mode": scenario.permission_mode,
        "argv_extra": list(run.argv),
        "model_requests": requests,
        "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "corral_version": __version__,
        "command": f"corral record {adapter_cls.agent_id} {scenario_name} --out {out}",
    }
    return transcript.write(out, cli, version, scenario_name, tape.entries(), meta)
