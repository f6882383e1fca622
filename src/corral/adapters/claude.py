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

from typing import Any, ClassVar

from ..intents import Intent
from ..intents import claude as intent_rules
from ._claude_launch import DEFAULT_BINARY, is_root
from ._claude_launch import build_launch as build_launch
from ._handoff_terminal import TerminalHandoff
from ._launch import Launch, StreamJsonRequest
from ._model_info import ModelInfo, effort_names, names_of
from ._stores import store_hooks
from ._stream_json import StreamJsonAdapter

PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto")
"""Claude Code's permission modes (``--permission-mode`` / ``set_permission_mode``)."""


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
    default_binary: ClassVar[str] = DEFAULT_BINARY

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
        return build_launch(request, base_env=self.base_env, as_root=is_root())

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
