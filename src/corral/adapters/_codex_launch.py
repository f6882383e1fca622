"""Pure argv/params building for the Codex driver (app-server and exec); no process is started.

Defaults: ``approval_policy="on-request"`` with the ``workspace-write`` sandbox — codex runs what
stays inside the workspace and asks before anything else. The app-server driver always sends both
in ``thread/start``: an explicit argument wins, then a ``-c approval_policy=…`` /
``-c sandbox_mode=…`` found in ``extra_args`` (lifted out of argv, see :func:`lift_policy`), then
the default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from .._generated.codex import models as wire
from ..protocols._codex_vocab import (
    ApprovalPolicy,
    SandboxMode,
    normalize_approval_policy,
    normalize_sandbox,
)
from . import _codex_argv as _argv
from ._codex_argv import lift_policy as lift_policy

DEFAULT_APPROVAL: ApprovalPolicy = "on-request"
DEFAULT_SANDBOX: SandboxMode = normalize_sandbox(_argv.DEFAULT_SANDBOX)

_SANDBOX_POLICY = {
    "read-only": {"type": "readOnly"},
    "workspace-write": {"type": "workspaceWrite"},
    "danger-full-access": {"type": "dangerFullAccess"},
}

PRESETS: dict[str, tuple[ApprovalPolicy, SandboxMode]] = {
    "read-only": ("on-request", "read-only"),
    "auto": ("on-request", "workspace-write"),
    "full-access": ("never", "danger-full-access"),
}
"""``set_permission_mode`` presets, named as in codex's own ``/approvals`` picker."""


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)


def app_server_launch(
    *,
    binary: str,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> Launch:
    """``codex app-server`` with the caller's extra args, minus the policy overrides (lifted)."""
    return Launch(argv=_argv.app_server_argv(binary, extra_args), env=dict(env or {}))


def exec_launch(
    *,
    binary: str,
    prompt: str,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    resume_thread: str | None = None,
    model: str | None = None,
    effort: str | None = None,
    sandbox: str | None = None,
    images: Sequence[str] = (),
    skip_git_check: bool = True,
) -> Launch:
    """``codex exec --json … PROMPT`` or ``codex exec --json … resume THREAD PROMPT``.

    exec never asks for approval (its policy is fixed to ``never``); only the sandbox applies.
    """
    argv = _argv.exec_argv(
        binary=binary,
        prompt=prompt,
        extra_args=extra_args,
        resume_thread=resume_thread,
        model=model,
        effort=effort,
        sandbox=normalize_sandbox(sandbox) if sandbox is not None else None,
        images=images,
        skip_git_check=skip_git_check,
    )
    return Launch(argv=argv, env=dict(env or {}))


def thread_params(
    *,
    cwd: str | None,
    model: str | None,
    approval: str | None,
    sandbox: str | None,
    config: Mapping[str, Any] | None = None,
    thread_id: str | None = None,
) -> dict[str, Any]:
    """``thread/start`` (or, with ``thread_id``, ``thread/resume``) params, schema-typed."""
    common: dict[str, Any] = {
        "cwd": cwd,
        "model": model,
        "approvalPolicy": normalize_approval_policy(approval) if approval else None,
        "sandbox": normalize_sandbox(sandbox) if sandbox else None,
        "config": dict(config) if config else None,
    }
    set_fields = {k: v for k, v in common.items() if v is not None}
    typed: Any = (
        # Without excludeTurns codex 0.171 sends the whole history back and a deprecation notice.
        wire.ThreadResumeParams(threadId=thread_id, excludeTurns=True, **set_fields)
        if thread_id is not None
        else wire.ThreadStartParams(**set_fields)
    )
    built: dict[str, Any] = msgspec.to_builtins(typed)
    return built


def turn_params(
    *,
    thread_id: str,
    items: list[dict[str, Any]],
    model: str | None = None,
    effort: str | None = None,
    approval: str | None = None,
    sandbox: str | None = None,
) -> dict[str, Any]:
    """``turn/start`` params; the overrides persist for later turns (codex's rule)."""
    extra: dict[str, Any] = {}
    if model is not None:
        extra["model"] = model
    if effort is not None:
        extra["effort"] = effort
    if approval is not None:
        extra["approvalPolicy"] = normalize_approval_policy(approval)
    if sandbox is not None:
        extra["sandboxPolicy"] = _SANDBOX_POLICY[normalize_sandbox(sandbox)]
    params: dict[str, Any] = msgspec.to_builtins(wire.TurnStartParams(threadId=thread_id, input=[]))
    params.update(extra)
    params["input"] = items
    return params


def permission_mode(mode: str) -> tuple[str | None, str | None]:
    """A preset, an approval policy or a sandbox mode → (approval, sandbox) to apply."""
    if mode in PRESETS:
        return PRESETS[mode]
    try:
        return normalize_approval_policy(mode), None
    except ValueError:
        return None, normalize_sandbox(mode)
