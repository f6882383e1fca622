"""corral's public test kit: the scripted fake model server, the conformance suite
(:mod:`corral.testing.conformance`), :class:`Recording` / :class:`ReplayTransport` to play a recorded
transcript into a real line driver, :class:`HttpRecording` / :class:`HttpReplayTransport` to play a
recorded server exchange into a real HTTP driver (OpenCode's), and :func:`require_agent` for tests that need a real CLI. See
``docs/testing.md``."""

from ._replay import Recording, ReplayDivergence, ReplayTransport
from ._replay_http import HttpRecording, HttpReplayTransport
from ._require import require_agent
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
    "HttpRecording",
    "HttpReplayTransport",
    "Match",
    "Recording",
    "ReplayDivergence",
    "ReplayTransport",
    "Reply",
    "RequestLog",
    "RequestRecord",
    "RequestView",
    "Scenario",
    "Step",
    "ToolCallSpec",
    "builtin_scenarios",
    "load_scenario",
    "require_agent",
    "scenario_json_schema",
]
