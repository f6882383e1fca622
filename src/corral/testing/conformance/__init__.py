"""The conformance suite: named scenarios run on real CLIs, giving pass / fail / unsupported.

Public API::

    from corral.testing.conformance import SCENARIOS, Target, run_conformance
    results = await run_conformance([target], ["text", "tool-write"])

A declared capability whose scenario fails is a failure of the adapter (``contradicts_declaration``).
"""

from ._context import Context
from ._report import compatibility_markdown, matrix
from ._runner import make_workspace, run_conformance, run_scenario
from ._scenarios import SCENARIOS, ConformanceScenario, scenario_names
from ._session import LiveSession, ScenarioFailure, Turn
from ._types import Outcome, ScenarioResult, Target, Workspace

__all__ = [
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
    "compatibility_markdown",
    "make_workspace",
    "matrix",
    "run_conformance",
    "run_scenario",
    "scenario_names",
]
