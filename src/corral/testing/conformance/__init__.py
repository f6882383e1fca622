"""The conformance suite: named scenarios run on real CLIs, giving pass / fail / unsupported.

Public API::

    from corral.testing.conformance import SCENARIOS, Target, run_conformance
    results = await run_conformance([target], ["text", "tool-write"])
    targets, missing = builtin_targets(["claude", "my-dropin"])   # any runnable registry adapter

:class:`LiveSession` is the kit's one live driver (scenarios, recorders, real-CLI tests use it).

A declared capability whose scenario fails is a failure of the adapter (``contradicts_declaration``).
"""

from ._context import Context
from ._report import compatibility_markdown, matrix
from ._runner import make_workspace, run_conformance, run_scenario
from ._scenarios import SCENARIOS, ConformanceScenario, scenario_names
from ._session import LiveSession, ScenarioFailure, Turn
from ._targets import BASE_URL_ENV, MODEL_ENV, builtin_targets, registry_target
from ._types import Outcome, ScenarioResult, Target, Workspace

__all__ = [
    "BASE_URL_ENV",
    "MODEL_ENV",
    "SCENARIOS",
    "ConformanceScenario",
    "Context",
    "LiveSession",
    "Outcome",
    "ScenarioFailure",
    "ScenarioResult",
    "Target",
    "Turn",
    "Workspace",
    "builtin_targets",
    "compatibility_markdown",
    "make_workspace",
    "matrix",
    "registry_target",
    "run_conformance",
    "run_scenario",
    "scenario_names",
]
