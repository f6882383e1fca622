"""Conformance targets: each real agent CLI, pointed at the scripted model server.

A built-in target (:data:`SPECS`) names the adapter id — resolved through
:class:`corral.registry.Registry` like every other caller's — the ``corral.redirect`` entry that
points the CLI at the server, and what it needs for the approval scenarios. What a CLI truly cannot
do is listed in ``unsupported`` with the reason.

Any other runnable adapter the registry knows (a drop-in or an entry-point adapter) is a target too
when named: it is constructed with ``cwd`` and ``env`` holding :data:`BASE_URL_ENV` (the scripted
model server's root URL) and :data:`MODEL_ENV` (the model name to ask for), and its class's
``cap_*`` flags decide which scenarios apply.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...adapters.base import BaseAdapter, construct, supported_options
from ...errors import AdapterNotFoundError
from ...redirect._opencode_family import PROVIDER_ID as OPENCODE_PROVIDER
from ...registry import Registry
from ._types import Target

FAKE_MODEL = "fake-model"
BASE_URL_ENV = "CORRAL_MODEL_BASE_URL"
"""Environment variable a third-party adapter under conformance reads the model server's URL from."""
MODEL_ENV = "CORRAL_MODEL"
"""Environment variable naming the model a third-party adapter under conformance asks for."""


@dataclass(frozen=True)
class TargetSpec:
    agent: str
    """The conformance name (also the ``corral agents`` pin name)."""
    adapter: str
    """The adapter id, resolved through the registry."""
    redirect: str
    """The ``corral.redirect`` agent name."""
    approval_init: Mapping[str, Any] = field(default_factory=dict)
    unsupported: Mapping[str, str] = field(default_factory=dict)
    turn_timeout: float = 60.0
    scripts: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Model scripts that replace a scenario's own for this CLI (same checks, another tool)."""
    prepare: Callable[[Path, Path], None] | None = None
    """``prepare(home, cwd)`` after the redirection is applied (a TUI's first-run answers)."""
    model: str = FAKE_MODEL
    """The model name the adapter is launched with."""
    launch_init: Mapping[str, Any] = field(default_factory=dict)
    """Launch options every scenario's adapter gets (a scenario's own ``init`` wins)."""


_ACP_NO_QUESTION = (
    "ACP v1 has no question request (elicitation is unstable; the agent never sends it)"
)
_ACP_ONE_TURN = "ACP runs one prompt per session at a time; corral queues a prompt sent mid-turn"
_HERMES_APPROVAL_SCRIPTS = {
    # Hermes 0.19.0 asks only for file edits and for commands its danger patterns flag: its
    # approval scenarios write the file with the edit tool instead of the harmless shell command.
    name: {
        "steps": [
            {
                "name": "call-write_file",
                "match": {"last_is_tool_result": False},
                "times": 1,
                "reply": {
                    "tool_calls": [
                        {"capability": "write_file", "path": filename, "content": content}
                    ]
                },
            }
        ],
        "default": {"text": "Hello from the scripted model.", "chunks": 4},
    }
    for name, filename, content in (
        ("approval-allow", "approved.txt", "ok"),
        ("approval-deny", "denied.txt", "no"),
    )
}

_PLAIN_AIDER_UNSUPPORTED = {
    "tool-write": "aider edits by text (whole-file listings in its answer), not by tool calls: "
    "no tool event exists on stdout to check",
    "tool-shell": "aider runs no tool calls; its shell suggestions are switched off "
    "(--no-suggest-shell-commands)",
    "usage": "aider prints a 'Tokens: N sent, M received' line as text (1.2k, rounded); a plain "
    "driver reads no usage out of text",
}

_PLAIN_AIDER_SCRIPTS = {
    # aider prints its banner before it asks the model, so the scenario's cancel (on the first
    # text) can land before the story is requested: the slow reply is matched by the prompt,
    # not by "the first request". tests/realcli/test_plain_aider.py cancels mid-story too.
    "cancel-mid-turn": {
        "steps": [
            {
                "name": "slow",
                "match": {"user_text_contains": "long story"},
                "times": 1,
                "reply": {"text": "Once upon a time " * 40, "chunks": 40, "chunk_delay": 0.25},
            }
        ],
        "default": {"text": "Hello from the scripted model.", "chunks": 4},
    }
}


def _shell_specs() -> list[TargetSpec]:
    from ._shell_targets import SHELL_TARGETS

    return [TargetSpec(**row) for row in SHELL_TARGETS]


SHELL_SPECS = _shell_specs()
"""The shell grade's targets (``_shell_targets.py``): a CLI in a terminal."""

_HERMES_GATEWAY_APPROVAL_SCRIPTS = {
    # The gateway asks only before a command Hermes's danger patterns flag (file edits run
    # unasked): the approval scenarios' command also makes the file world-writable (chmod 666).
    name: {
        "steps": [
            {
                "name": "call-shell",
                "match": {"last_is_tool_result": False},
                "times": 1,
                "reply": {
                    "tool_calls": [
                        {
                            "capability": "shell",
                            "command": f"printf {content} > {filename} && chmod 666 {filename}",
                        }
                    ]
                },
            }
        ],
        "default": {"text": "Hello from the scripted model.", "chunks": 4},
    }
    for name, filename, content in (
        ("approval-allow", "approved.txt", "ok"),
        ("approval-deny", "denied.txt", "no"),
    )
}

_OPENCODE_SUBAGENT_SCRIPT = {
    # OpenCode's sub-agent tool is ``task`` (agent ``general``), not the scenario's ``agent``.
    "steps": [
        {
            "name": "delegate-task",
            "match": {"turn": 1, "user_text_contains": "Delegate"},
            "reply": {
                "tool_calls": [
                    {
                        "name": "task",
                        "arguments": {
                            "description": "Say hi",
                            "prompt": "Sub-agent: reply with a greeting.",
                            "subagent_type": "general",
                        },
                    }
                ]
            },
        },
        {
            "name": "sub",
            "match": {"user_text_contains": "Sub-agent"},
            "reply": {"text": "Hi from the sub-agent."},
        },
        {"name": "done", "match": {"last_is_tool_result": True}, "reply": {"text": "DONE"}},
    ],
    "default": {"text": "Hello from the scripted model."},
}

SPECS: dict[str, TargetSpec] = {
    spec.agent: spec
    for spec in [
        TargetSpec("claude", "claude-code", "claude"),
        TargetSpec("qwen", "qwen", "qwen"),
        TargetSpec(
            "codex",
            "codex",
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
            "codex-exec",
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
            "gemini",
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
            "gemini-exec",
            "gemini-exec",
            "gemini",
            # gemini -p never asks; in its default mode the model is offered no tool that would
            # ask (no write_file, no run_shell_command), so the tool scenarios run under yolo,
            # as a person would with --vendor-permission-mode yolo.
            launch_init={"permission_mode": "yolo"},
            unsupported={
                "input-during-turn": "gemini -p reads no input once started (one prompt per process)",
            },
            turn_timeout=45.0,
        ),
        TargetSpec(
            "qwen-acp",
            "qwen-acp",
            "qwen",
            unsupported={
                "question": _ACP_NO_QUESTION,
                "input-during-turn": _ACP_ONE_TURN,
            },
            turn_timeout=45.0,
        ),
        TargetSpec(
            "opencode-acp",
            "opencode-acp",
            "opencode",
            unsupported={
                "question": _ACP_NO_QUESTION,
                "input-during-turn": _ACP_ONE_TURN,
            },
            turn_timeout=60.0,
        ),
        TargetSpec(
            "hermes",
            "hermes",
            "hermes",
            unsupported={
                "question": _ACP_NO_QUESTION,
                "input-during-turn": _ACP_ONE_TURN,
            },
            turn_timeout=60.0,
            scripts=_HERMES_APPROVAL_SCRIPTS,
        ),
        TargetSpec(
            "hermes-gateway",
            "hermes-gateway",
            "hermes",
            unsupported={
                "input-during-turn": "the gateway interrupts a running turn for a prompt sent "
                "into it (busy_input_mode); corral holds the prompt until the turn ends",
            },
            turn_timeout=60.0,
            scripts=_HERMES_GATEWAY_APPROVAL_SCRIPTS,
        ),
        TargetSpec(
            "opencode",
            "opencode",
            "opencode",
            # The redirect config allows every tool; the session's own ruleset asks instead.
            approval_init={"permission_mode": "ask"},
        ),
        TargetSpec(
            "opencode-run",
            "opencode-run",
            "opencode",
            unsupported={
                "cancel-mid-turn": "run prints a text part only once it is finished, right before "
                "the step ends: a cancel cannot land mid-turn (interrupt() still ends the process)",
            },
            model=f"{OPENCODE_PROVIDER}/{FAKE_MODEL}",
            scripts={"subagent": _OPENCODE_SUBAGENT_SCRIPT},
        ),
        TargetSpec(
            "kilo",
            "kilo",
            "kilo",
            unsupported={
                "question": _ACP_NO_QUESTION,
                "input-during-turn": _ACP_ONE_TURN,
            },
            turn_timeout=60.0,
        ),
        TargetSpec(
            "copilot",
            "copilot",
            "copilot",
            unsupported={
                "question": _ACP_NO_QUESTION,
                "input-during-turn": _ACP_ONE_TURN,
            },
            turn_timeout=60.0,
        ),
        *SHELL_SPECS,
        TargetSpec(
            "aider-plain",
            "aider-plain",
            "aider",
            unsupported=_PLAIN_AIDER_UNSUPPORTED,
            turn_timeout=120.0,
            scripts=_PLAIN_AIDER_SCRIPTS,
        ),
        TargetSpec(
            "pi",
            "pi",
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


def build_target(
    spec: TargetSpec, registry: Registry | None = None, *, binary: str | None = None
) -> Target:
    """A ``Target`` whose adapters run the pinned CLI (or ``binary``) against a given base URL."""
    from ...agents import locate
    from ...redirect import redirect_for

    cls = (registry or Registry()).resolve(spec.adapter)
    binary = binary or (str(found) if (found := locate(spec.redirect)) else None)

    def make_adapter(*, base_url: str, home: Path, cwd: Path, **init: Any) -> BaseAdapter:
        red = redirect_for(
            spec.redirect, base_url=base_url, model=FAKE_MODEL, api_key="test", home=home
        )
        red.apply()
        if spec.prepare is not None:
            spec.prepare(home, cwd)
        for name, value in spec.launch_init.items():
            init.setdefault(name, value)
        extra_args = [*red.argv, *init.pop("extra_args", [])]
        if "model" in supported_options(cls):  # a plain CLI picks its model its own way
            init.setdefault("model", spec.model)
        return construct(
            cls,
            cwd=str(cwd),
            binary=binary,
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
        scripts={name: dict(script) for name, script in spec.scripts.items()},
    )


def registry_target(adapter_id: str, registry: Registry | None = None) -> Target:
    """A target for any runnable adapter of the registry (drop-in, entry point, custom driver)."""
    cls = (registry or Registry()).resolve(adapter_id)

    def make_adapter(*, base_url: str, home: Path, cwd: Path, **init: Any) -> BaseAdapter:
        env = {BASE_URL_ENV: base_url, MODEL_ENV: FAKE_MODEL, **init.pop("env", {})}
        return construct(cls, cwd=str(cwd), env=env, **init)

    unsupported = dict(REGISTRY_UNSUPPORTED.get(adapter_id, {}))
    return Target(
        agent=adapter_id, adapter_class=cls, make_adapter=make_adapter, unsupported=unsupported
    )


_NO_MODEL = (
    "{cli} calls no model: it prints its prompt back, so the scripted model's answer, its request "
    "log and {what} cannot appear (the plain driver's streaming, exit codes and cancel are "
    "tested on echo, cat and sh in tests/unit/adapters/test_plain_adapter.py)"
)


def _no_model(cli: str) -> dict[str, str]:
    return {
        name: _NO_MODEL.format(cli=cli, what=what)
        for name, what in (
            ("text", "its text"),
            ("tool-write", "a tool call"),
            ("tool-shell", "a tool call"),
            ("follow-up", "an earlier turn"),
            ("usage", "token usage"),
            ("error-429", "a rate limit"),
        )
    }


REGISTRY_UNSUPPORTED: dict[str, dict[str, str]] = {
    "example-plain-argv": _no_model("echo"),
    "example-plain-stdin": _no_model("cat"),
}
"""Scenarios a built-in manifest without a target spec (run by :func:`registry_target`) cannot
run, with the reason."""


IMPORTED_QUIRKS: dict[str, dict[str, str]] = {
    "gemini": {
        "tool-write": "gemini 0.61.0 cannot create a file when the client serves fs/read_text_file "
        "(it stringifies corral's not-found error and never sees ENOENT); the generic ACP driver "
        "serves reads, the built-in gemini adapter keeps them local and passes (docs/protocols/acp.md)"
    },
}
"""Per pin: what the shared ACP driver cannot do with that CLI when it comes from an ACP registry
entry (a bug of the CLI a built-in adapter works around), with the reason shown in the matrix."""


def pinned_spec(adapter_id: str, registry: Registry) -> TargetSpec | None:
    """A target spec for a registry adapter whose manifest installs a pinned, redirectable CLI.

    An imported ACP registry entry (``acp.gemini``) names the package of one of corral's pins in
    its ``install``; that pin's binary and redirection then point it at the scripted model.
    """
    from ...agents import pinned
    from ...redirect import supported

    if adapter_id not in registry:
        return None
    install = registry.manifest(adapter_id).install
    packages = {install.npm, install.pip} - {None} if install is not None else set()
    for pin in pinned():
        if pin.package in packages and pin.name in supported():
            quirks = IMPORTED_QUIRKS.get(pin.name, {})
            return TargetSpec(adapter_id, adapter_id, pin.name, unsupported=quirks)
    return None


def builtin_targets(
    names: list[str] | None = None, registry: Registry | None = None
) -> tuple[list[Target], dict[str, str]]:
    """Targets for ``names`` (every built-in target by default) and, per missing one, why.

    A name that is no built-in target but a runnable registry adapter gets a
    :func:`registry_target`.
    """
    registry = registry or Registry()
    wanted = names or list(SPECS)
    targets: list[Target] = []
    missing: dict[str, str] = {}
    for name in wanted:
        spec = SPECS.get(name) or pinned_spec(name, registry)
        try:
            targets.append(
                build_target(spec, registry) if spec else registry_target(name, registry)
            )
        except AdapterNotFoundError as exc:
            missing[name] = str(exc)
    return targets, missing
