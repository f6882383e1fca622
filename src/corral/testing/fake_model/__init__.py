"""The scripted fake model server: every wire API the real agent CLIs speak, on 127.0.0.1.

See ``docs/testing.md``. Public names are re-exported from :mod:`corral.testing`.
"""

from ._log import RequestLog, RequestRecord, RequestView
from ._scenario import (
    ErrorSpec,
    HoldSpec,
    Match,
    Reply,
    Scenario,
    Step,
    ToolCallSpec,
    Usage,
    builtin_scenarios,
    load_scenario,
    scenario_json_schema,
)
from ._server import FakeModelServer
from ._tools import CAPABILITY_TOOLS, find_cwd
from ._types import Message, ParsedRequest, ToolCall, ToolInfo, WireApi

__all__ = [
    "CAPABILITY_TOOLS",
    "ErrorSpec",
    "FakeModelServer",
    "HoldSpec",
    "Match",
    "Message",
    "ParsedRequest",
    "Reply",
    "RequestLog",
    "RequestRecord",
    "RequestView",
    "Scenario",
    "Step",
    "ToolCall",
    "ToolCallSpec",
    "ToolInfo",
    "Usage",
    "WireApi",
    "builtin_scenarios",
    "find_cwd",
    "load_scenario",
    "scenario_json_schema",
]
