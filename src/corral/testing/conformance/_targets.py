"""Built-in conformance targets: each real agent CLI, pointed at the scripted model server.

A target names the adapter class (imported lazily, so a driver that is not built yet is simply
absent), the ``corral.redirect`` entry that points the CLI at the server, and what it needs for the
approval scenarios. What a CLI truly cannot do is listed in ``unsupported`` with the reason.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...adapters.base import BaseAdapter, construct
from ._types import Target

FAKE_MODEL = "fake-model"


@dataclass(frozen=True)
class TargetSpec:
    agent: str
    """The conformance name (also the ``corral agents`` pin name)."""
    adapter: str
    """``module:Class`` of the adapter."""
    redirect: str
    """The ``corral.redirect`` agent name."""
    approval_init: Mapping[str, Any] = field(default_factory=dict)
    unsupported: Mapping[str, str] = field(default_factory=dict)
    turn_timeout: float = 60.0


_ACP_NO_QUESTION = (
    "ACP v1 has no question request (elicitation is unstable; the agent never sends it)"
)
_ACP_ONE_TURN = "ACP runs one prompt per session at a time; corral queues a prompt sent mid-turn"
_HERMES_APPROVALS = (
    "Hermes 0.19.0 asks only for file edits and for commands its danger patterns flag; the "
    "scenario's harmless shell command runs without a request (edit approvals: tests/realcli)"
)

SPECS: dict[str, TargetSpec] = {
    spec.agent: spec
    for spec in [
        TargetSpec("claude", "corral.adapters.claude:ClaudeAdapter", "claude"),
        TargetSpec("qwen", "corral.adapters.qwen:QwenAdapter", "qwen"),
        TargetSpec(
            "codex",
            "corral.adapters.codex:CodexAdapter",
            "codex",
            # "untrusted" makes codex 0.171 ask before every command not on its safe list.
            approval_init={"extra_args": ["-c", 'approval_policy="untrusted"']},
            unsupported={
                "tool-write": "codex 0.171 offers no apply_patch to a custom-provider model: "
                "the file is written by a shell command (kind command, no diff). Given "
                "apply_patch by a model catalog the edit conforms, but apply_patch ends the "
                "file with a newline ('hi\\n'), see tests/realcli/test_codex_extra.py",
                "question": "codex 0.171 refuses request_user_input in Default mode "
                "('request_user_input is unavailable in Default mode') unless the "
                "under-development feature default_mode_request_user_input is enabled; "
                "with it questions work (tests/realcli/test_codex_extra.py)",
            },
        ),
        TargetSpec(
            "codex-exec",
            "corral.adapters.codex:CodexExecAdapter",
            "codex",
            unsupported={
                "tool-write": "exec: no file-writing tool for a custom-provider model; "
                "writes happen through shell commands",
                "cancel-mid-turn": "exec prints an agent message only when it is complete, "
                "right before turn.completed: a cancel cannot land mid-turn (interrupt() still "
                "kills the process)",
            },
        ),
        TargetSpec(
            "gemini",
            "corral.adapters.gemini:GeminiAdapter",
            "gemini",
            unsupported={
                "question": _ACP_NO_QUESTION,
                "input-during-turn": _ACP_ONE_TURN,
                "resume-after-exit": "gemini 0.61.0 session/load re-initialises the session's chat "
                "record before reading it, so the load finds no history ('No previous sessions "
                "found for this project'); it only wins the race now and then",
            },
            turn_timeout=45.0,
        ),
        TargetSpec(
            "qwen-acp",
            "corral.adapters.qwen_acp:QwenAcpAdapter",
            "qwen",
            unsupported={
                "question": _ACP_NO_QUESTION,
                "input-during-turn": _ACP_ONE_TURN,
            },
            turn_timeout=45.0,
        ),
        TargetSpec(
            "opencode-acp",
            "corral.adapters.opencode_acp:OpenCodeAcpAdapter",
            "opencode",
            unsupported={
                "question": _ACP_NO_QUESTION,
                "input-during-turn": _ACP_ONE_TURN,
            },
            turn_timeout=60.0,
        ),
        TargetSpec(
            "hermes",
            "corral.adapters.hermes:HermesAdapter",
            "hermes",
            unsupported={
                "question": _ACP_NO_QUESTION,
                "input-during-turn": _ACP_ONE_TURN,
                "approval-allow": _HERMES_APPROVALS,
                "approval-deny": _HERMES_APPROVALS,
            },
            turn_timeout=60.0,
        ),
        TargetSpec(
            "opencode",
            "corral.adapters.opencode:OpenCodeAdapter",
            "opencode",
            # The redirect config allows every tool; the session's own ruleset asks instead.
            approval_init={"permission_mode": "ask"},
        ),
        TargetSpec(
            "pi",
            "corral.adapters.pi:PiAdapter",
            "pi",
            unsupported={
                "approval-allow": "pi has no approval system (tools run directly)",
                "approval-deny": "pi has no approval system (tools run directly)",
                "question": "pi has no question tool",
            },
        ),
    ]
}
"""Every built-in target. A driver fills in its own entry (approval_init, unsupported, timeout)."""


def register(spec: TargetSpec) -> None:
    """Add or replace a built-in target (drivers register theirs here)."""
    SPECS[spec.agent] = spec


def _load_class(path: str) -> type[BaseAdapter]:
    module, _, name = path.partition(":")
    cls = getattr(importlib.import_module(module), name)
    if not (isinstance(cls, type) and issubclass(cls, BaseAdapter)):
        raise TypeError(f"{path} is not a BaseAdapter subclass")
    return cls


def build_target(spec: TargetSpec) -> Target:
    """A ``Target`` whose adapters run the pinned CLI against a given base URL."""
    from ...agents import locate
    from ...redirect import redirect_for

    cls = _load_class(spec.adapter)
    binary = locate(spec.redirect)

    def make_adapter(*, base_url: str, home: Path, cwd: Path, **init: Any) -> BaseAdapter:
        red = redirect_for(
            spec.redirect, base_url=base_url, model=FAKE_MODEL, api_key="test", home=home
        )
        red.apply()
        extra_args = [*red.argv, *init.pop("extra_args", [])]
        return construct(
            cls,
            cwd=str(cwd),
            model=init.pop("model", FAKE_MODEL),
            binary=str(binary) if binary else None,
            env=dict(red.env),
            extra_args=extra_args,
            **init,
        )

    return Target(
        agent=spec.agent,
        adapter_class=cls,
        make_adapter=make_adapter,
        unsupported=dict(spec.unsupported),
        turn_timeout=spec.turn_timeout,
        extra={"approval_init": dict(spec.approval_init)},
    )


def builtin_targets(names: list[str] | None = None) -> tuple[list[Target], dict[str, str]]:
    """Targets for ``names`` (all registered by default) and, per missing one, why it is missing."""
    wanted = names or list(SPECS)
    targets: list[Target] = []
    missing: dict[str, str] = {}
    for name in wanted:
        spec = SPECS.get(name)
        if spec is None:
            missing[name] = "no conformance target registered (no driver yet)"
            continue
        try:
            targets.append(build_target(spec))
        except (ImportError, AttributeError, TypeError) as exc:
            missing[name] = f"driver not available: {exc}"
    return targets, missing
