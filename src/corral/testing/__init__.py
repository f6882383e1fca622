"""corral's public test kit: the scripted fake model server (and, later, the conformance suite)."""

from .fake_model import (
    ErrorSpec,
    FakeModelServer,
    HoldSpec,
    Match,
    Reply,
    RequestLog,
    RequestRecord,
    RequestView,
    Scenario,
    Step,
    ToolCallSpec,
    builtin_scenarios,
    load_scenario,
    scenario_json_schema,
)

__all__ = [
    "ErrorSpec",
    "FakeModelServer",
    "HoldSpec",
    "Match",
    "Reply",
    "RequestLog",
    "RequestRecord",
    "RequestView",
    "Scenario",
    "Step",
    "ToolCallSpec",
    "builtin_scenarios",
    "load_scenario",
    "scenario_json_schema",
]
