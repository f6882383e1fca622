"""Claude Code adapter: a persistent ``claude`` process on stream-json with the control protocol.

Launch (pure, :func:`build_launch`)::

    claude --input-format stream-json --output-format stream-json --verbose
           --include-partial-messages --permission-prompt-tool stdio
           [--model M] [--permission-mode MODE] [--resume ID [--fork-session]] [--session-id UUID]
           [--add-dir D]... [--settings JSON] [--effort E] [extra args...]

The environment drops ``CLAUDECODE`` (a nested claude refuses to start when it is set) and sets
``PWD``. As root, Claude Code refuses ``bypassPermissions`` unless ``IS_SANDBOX=1``; the launch sets
it in that one case.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, ClassVar

import msgspec

from ..intents import Intent
from ..intents import claude as intent_rules
from ._handoff_terminal import TerminalHandoff
from ._launch import Launch, StreamJsonRequest, merged_env
from ._model_info import ModelInfo, effort_names, names_of
from ._stores import store_hooks
from ._stream_json import StreamJsonAdapter

PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto")
"""Claude Code's permission modes (``--permission-mode`` / ``set_permission_mode``)."""

_DROP_ENV = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT")


def build_launch(
    request: StreamJsonRequest, *, base_env: Mapping[str, str], as_root: bool = False
) -> Launch:
    """argv/env/cwd for one Claude Code session. Pure: the same input gives the same Launch."""
    argv = [
        request.binary,
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-partial-messages",
        "--permission-prompt-tool",
        "stdio",
    ]
    if request.model:
        argv += ["--model", request.model]
    if request.permission_mode:
        argv += ["--permission-mode", request.permission_mode]
    if request.resume:
        argv += ["--resume", request.resume]
        if request.fork_session:
            argv.append("--fork-session")
    if request.session_id:
        argv += ["--session-id", request.session_id]
    for directory in request.add_dirs:
        argv += ["--add-dir", directory]
    if request.settings is not None:
        argv += ["--settings", msgspec.json.encode(request.settings).decode()]
    if request.effort:
        argv += ["--effort", request.effort]
    argv += request.extra_args
    env = merged_env(base_env, request.env, drop=_DROP_ENV)
    if request.cwd:
        env["PWD"] = request.cwd
    if as_root and request.permission_mode == "bypassPermissions":
        env["IS_SANDBOX"] = "1"
    return Launch(argv=tuple(argv), env=env, cwd=request.cwd)


@store_hooks("_store_claude")
class ClaudeAdapter(TerminalHandoff, StreamJsonAdapter):
    agent_id = "claude-code"
    display_name = "Claude Code"
    cli_binary = "claude"
    # Hand-off (seed 003; adapters/_handoff_terminal.py).
    handoff_kind = "persistent"
    handoff_processes = ("claude",)
    handoff_session_flags = ("--resume", "-r", "--session-id")
    handoff_resume_args = ("--resume", "{sid}")
    default_binary: ClassVar[str] = "claude"

    cap_image_input = True
    cap_documents = True
    cap_thinking = True
    cap_permissions = True
    cap_subagents = True
    cap_cancel = True
    cap_input_during_turn = True
    cap_resume = True
    cap_interact = True

    provides_models = True
    provides_usage = True

    enforceable_intents = frozenset(Intent)
    intent_renderer = intent_rules.render

    def build(self, request: StreamJsonRequest) -> Launch:
        return build_launch(request, base_env=self.base_env, as_root=_is_root())

    def initialize_request(self) -> dict[str, Any]:
        # Without forwardSubagentText the CLI keeps a sub-agent's messages to itself.
        return {"subtype": "initialize", "hooks": None, "forwardSubagentText": True}

    async def list_models(self) -> list[str]:
        """The ``models`` of the ``initialize`` response (each entry's ``value``: ``default``,
        ``sonnet``, ``opus[1m]``, ... and any custom model), as the CLI reported them."""
        return models_of_initialize(self.init_response)

    async def describe_models(self) -> list[ModelInfo]:
        """As :meth:`list_models`, with each model's ``supportedEffortLevels``."""
        return model_infos_of_initialize(self.init_response)


def models_of_initialize(response: dict[str, Any]) -> list[str]:
    """The model values of a Claude Code ``initialize`` answer; anything malformed is skipped."""
    return names_of(model_infos_of_initialize(response))


def model_infos_of_initialize(response: dict[str, Any]) -> list[ModelInfo]:
    """Each ``models[]`` entry of an ``initialize`` answer: ``value``, ``displayName`` and its
    efforts (``supportedEffortLevels``; no ``supportsEffort: true`` and no levels: none)."""
    models = response.get("models")
    if not isinstance(models, list):
        return []
    out: list[ModelInfo] = []
    for m in models:
        if not isinstance(m, dict) or not isinstance(m.get("value"), str):
            continue
        efforts = effort_names(m.get("supportedEffortLevels"))
        if m.get("supportsEffort") is not True and not efforts:
            efforts = ()  # the answer marks effort per model; haiku's entry has no such key
        name = m.get("displayName")
        out.append(
            ModelInfo(id=m["value"], name=name if isinstance(name, str) else None, efforts=efforts)
        )
    return out


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0
