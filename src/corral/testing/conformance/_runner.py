"""Running scenarios against targets and checking declared capabilities against outcomes."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .._catalogue import RETIRED
from ._context import Context
from ._scenarios import SCENARIOS, ConformanceScenario, scenario_names
from ._session import ScenarioFailure
from ._types import Outcome, ScenarioResult, Target, Workspace


def make_workspace(root: Path) -> Workspace:
    """An isolated HOME and a git repository with one commit, under ``root``."""
    home, repo = root / "home", root / "repo"
    home.mkdir(parents=True)
    repo.mkdir(parents=True)
    env = {
        "GIT_AUTHOR_NAME": "corral",
        "GIT_AUTHOR_EMAIL": "corral@localhost",
        "GIT_COMMITTER_NAME": "corral",
        "GIT_COMMITTER_EMAIL": "corral@localhost",
        "HOME": str(home),
        "PATH": "/usr/bin:/bin:/usr/local/bin",
    }
    (repo / "README.md").write_text("# scratch repository for a conformance scenario\n")
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    return Workspace(home=home, repo=repo)


def declared(target: Target, scenario: ConformanceScenario) -> bool | None:
    if scenario.capability is None:
        return None
    return bool(getattr(target.adapter_class, f"cap_{scenario.capability}", False))


async def run_scenario(
    target: Target,
    scenario: ConformanceScenario,
    server: Any,
    *,
    root: Path | None = None,
) -> ScenarioResult:
    """Run one scenario; never raises for a scenario problem, returns its result."""
    claims = declared(target, scenario)

    def result(outcome: Outcome, reason: str | None, seconds: float = 0.0) -> ScenarioResult:
        return ScenarioResult(
            agent=target.agent,
            scenario=scenario.name,
            outcome=outcome,
            reason=reason,
            seconds=round(seconds, 2),
            declared=claims,
        )

    if scenario.name in target.unsupported:
        if claims:
            return result(
                Outcome.FAIL,
                f"declares {scenario.capability} but the target lists "
                f"it unsupported: {target.unsupported[scenario.name]}",
            )
        return result(Outcome.UNSUPPORTED, target.unsupported[scenario.name])
    if claims is False:
        return result(
            Outcome.UNSUPPORTED,
            f"{target.agent} does not declare the {scenario.capability} capability",
        )
    tmp = Path(tempfile.mkdtemp(prefix=f"corral-{target.agent}-{scenario.name}-", dir=root))
    started = time.monotonic()
    try:
        workspace = make_workspace(tmp)
        server.set_scenario({"name": scenario.name, **target.script_for(scenario)})
        clear = getattr(server.requests, "clear", None)
        if clear is not None:
            clear()
        ctx = Context(
            target=target, server=server, workspace=workspace, timeout=target.turn_timeout
        )
        await asyncio.wait_for(scenario.run(ctx), target.turn_timeout * 4)
        return result(Outcome.PASS, None, time.monotonic() - started)
    except ScenarioFailure as exc:
        return result(Outcome.FAIL, str(exc), time.monotonic() - started)
    except TimeoutError:
        return result(Outcome.FAIL, "scenario timed out", time.monotonic() - started)
    except Exception as exc:
        tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return result(Outcome.FAIL, f"crashed: {tb}", time.monotonic() - started)
    finally:
        release = getattr(server, "release_holds", None)
        if release is not None:
            release()
        shutil.rmtree(tmp, ignore_errors=True)


async def run_conformance(
    targets: Iterable[Target],
    scenarios: Iterable[str] | None = None,
    *,
    server: Any = None,
    on_result: Callable[[ScenarioResult], None] | None = None,
) -> list[ScenarioResult]:
    """Run the named scenarios (all by default) against every target; one server for the run."""
    names = list(scenarios) if scenarios is not None else scenario_names()
    retired = [f"{n!r} is now {RETIRED[n]!r}" for n in names if n in RETIRED]
    if retired:
        raise ValueError(f"retired conformance scenario name(s): {', '.join(retired)}")
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        raise ValueError(f"unknown conformance scenario(s): {', '.join(unknown)}")
    if server is None:
        from ..fake_model import FakeModelServer

        async with FakeModelServer() as own:
            return await run_conformance(targets, names, server=own, on_result=on_result)
    results: list[ScenarioResult] = []
    for target in targets:
        for name in names:
            res = await run_scenario(target, SCENARIOS[name], server)
            results.append(res)
            if on_result is not None:
                on_result(res)
    return results
