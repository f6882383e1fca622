"""Scenarios: a small declarative script of what the fake model answers.

A scenario is a list of *steps*. For each request the first step whose ``match`` fits (and that is
not used up, see ``times``) produces the reply. When no step fits:

- a main request (the client advertised tools, or a tool-less conversation already under way:
  :func:`~corral.testing.fake_model._plan.is_main_request`) that carries no tool result yet gets
  ``default``;
- a main request that ends in a tool result gets the text ``DONE``;
- a side request (titles, JSON-schema calls, routers) gets an automatic answer — a JSON
  object with the demanded required keys, or the text ``DONE`` — and is not counted as a turn.

Steps match main requests only unless ``match.kind`` says otherwise. ``match.turn`` counts main
requests from 1 since the scenario was set. Scenarios load from YAML or JSON; the JSON Schema is
:func:`scenario_json_schema`. Ready-made scenarios ship as package data (:func:`builtin_scenarios`).
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...errors import ConfigError

Capability = Literal["write_file", "edit", "shell", "read", "ask_user"]
"""What a tool call should do; resolved to whichever matching tool the client advertised.

- ``write_file``: create a file (``Write``, ``write``, ``write_file`` …).
- ``edit``: replace text in a file (``Edit``, ``edit``, ``replace`` …).
- ``shell``: run a command (``Bash``, ``exec_command``, ``run_shell_command`` …).
- ``read``: read a file (``Read``, ``read``, ``read_file`` …).
- ``ask_user``: ask the user a question (``AskUserQuestion``, ``question``, ``request_user_input`` …).
"""

ErrorKind = Literal["rate_limit", "server", "overloaded", "bad_request"]
"""Which failure to answer with; each wire API renders its own status and error body."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Match(_Model):
    """Conditions on the request; every field that is set must hold."""

    kind: Literal["main", "side", "any"] = "main"
    """``main``: a turn of the agent loop (tools advertised, or a tool-less conversation under
    way); ``side``: titles, JSON calls, routers; ``any``: both."""
    wire_api: list[str] | None = None
    has_tools: bool | None = None
    last_is_tool_result: bool | None = None
    tool_result_contains: str | None = None
    """Substring of a tool result at the end of the conversation."""
    user_text_contains: str | None = None
    """Substring of the latest user text."""
    user_text_regex: str | None = None
    """Regular expression searched in the latest user text."""
    turn: int | None = Field(default=None, ge=1)
    """The n-th main request (1-based) since the scenario was set."""
    model: str | None = None
    """Substring of the requested model name."""
    has_tool: str | None = None
    """A capability (``ask_user`` …) or exact tool name the client must have advertised.

    Useful to tell a CLI's own helper loops apart (qwen's background memory agent advertises only
    read/write/shell tools)."""


class ToolCallSpec(_Model):
    """A tool call, by capability (resolved per request) or by exact tool ``name``."""

    capability: Capability | None = None
    name: str | None = None
    """Call exactly this tool (``arguments`` are sent as given)."""
    arguments: dict[str, Any] | None = None
    path: str | None = None
    """File path; relative paths are resolved against the client's working directory."""
    content: str | None = None
    command: str | None = None
    old: str | None = None
    new: str | None = None
    question: str | None = None
    options: list[str] = Field(default_factory=list)


class ErrorSpec(_Model):
    kind: ErrorKind = "server"
    status: int | None = None
    """Override the HTTP status (default per kind: 429, 500, 529/503 per API, 400)."""
    retry_after: float | None = None
    """Seconds for the ``retry-after`` header."""
    message: str | None = None
    after_chunks: int | None = Field(default=None, ge=0)
    """Fail *inside* a streamed reply after this many frames (status 200, then the API's
    in-stream error event); ``None`` fails with an HTTP status before any output."""


class HoldSpec(_Model):
    """Hold the reply; a hold ends early when the client disconnects or the test releases it."""

    seconds: float | None = None
    """How long to hold; ``None`` holds until released (``FakeModelServer.release_holds``)."""
    after_chunks: int | None = None
    """Hold after this many stream frames; ``None`` holds before the response starts."""


class Usage(_Model):
    input_tokens: int = 10
    output_tokens: int = 5


class Reply(_Model):
    """What one step answers. Blocks are emitted as thinking, text, then tool calls."""

    text: str | None = None
    """Reply text; ``$user_text``, ``$tool_result`` and ``$turn`` are filled from the request."""
    chunks: int = Field(default=1, ge=1)
    """Split ``text`` into this many stream deltas."""
    chunk_delay: float = Field(default=0.0, ge=0)
    """Seconds between stream frames of text deltas."""
    thinking: str | None = None
    tool_calls: list[ToolCallSpec] = Field(default_factory=list)
    error: ErrorSpec | None = None
    disconnect_after: int | None = Field(default=None, ge=0)
    """Close the connection after this many stream frames (SSE events)."""
    hold: HoldSpec | None = None
    usage: Usage = Field(default_factory=Usage)


class Step(_Model):
    name: str | None = None
    match: Match = Field(default_factory=Match)
    times: int | None = Field(default=None, ge=1)
    """Use this step at most this many times; ``None`` repeats forever."""
    reply: Reply


class Scenario(_Model):
    name: str = "default"
    description: str = ""
    cwd: str | None = None
    """Working directory for relative paths, overriding what the request text says."""
    steps: list[Step] = Field(default_factory=list)
    default: Reply = Field(default_factory=lambda: Reply(text="DONE"))
    """Reply to a main request with no tool result when no step matches."""


def scenario_json_schema() -> dict[str, Any]:
    """The published JSON Schema of the scenario format."""
    return Scenario.model_json_schema()


def builtin_scenarios() -> list[str]:
    """Names of the scenarios shipped as package data."""
    folder = resources.files(__package__).joinpath("scenarios")
    return sorted(
        p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml")
    )


def load_scenario(source: Scenario | dict[str, Any] | str | Path) -> Scenario:
    """Load a scenario from a model, a mapping, a built-in name, or a YAML/JSON file path."""
    if isinstance(source, Scenario):
        return source
    if isinstance(source, dict):
        return _validate(source, "<mapping>")
    if isinstance(source, str) and source in builtin_scenarios():
        text = (
            resources.files(__package__).joinpath("scenarios", f"{source}.yaml").read_text("utf-8")
        )
        return _validate(yaml.safe_load(text), source)
    path = Path(source)
    if not path.is_file():
        raise ConfigError(f"no scenario file or built-in scenario named {str(source)!r}")
    text = path.read_text("utf-8")
    data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    return _validate(data, str(path))


def _validate(data: Any, origin: str) -> Scenario:
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"invalid scenario {origin}: {exc}") from exc
