"""Pure argv/params building for the Codex driver (app-server and exec); no process is started.

Defaults: ``approval_policy="on-request"`` with the ``workspace-write`` sandbox — codex runs what
stays inside the workspace and asks before anything else. The app-server driver always sends both
in ``thread/start``: an explicit argument wins, then a ``-c approval_policy=…`` /
``-c sandbox_mode=…`` found in ``extra_args`` (lifted out of argv, see :func:`lift_policy`), then
the default.
"""

from __future__ import annotations

import re
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

DEFAULT_APPROVAL: ApprovalPolicy = "on-request"
DEFAULT_SANDBOX: SandboxMode = "workspace-write"

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


def _sets(extra_args: Sequence[str], key: str) -> bool:
    return _find(list(extra_args), key) is not None


def _find(args: list[str], key: str) -> tuple[int, int, str] | None:
    """(start, length, TOML value) of the last ``-c key=value`` in ``args``."""
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*=\s*(.*)$")
    found: tuple[int, int, str] | None = None
    for i, arg in enumerate(args):
        if arg in ("-c", "--config") and i + 1 < len(args):
            m = pattern.match(args[i + 1])
            if m:
                found = (i, 2, m.group(1))
        elif arg.startswith("--config="):
            m = pattern.match(arg.removeprefix("--config="))
            if m:
                found = (i, 1, m.group(1))
    return found


def lift_policy(extra_args: Sequence[str]) -> tuple[list[str], str | None, str | None]:
    """Move ``-c approval_policy=…`` / ``-c sandbox_mode=…`` out of argv.

    codex 0.171 refuses ``approval_policy = "untrusted"`` in config ("no longer supported") yet
    accepts ``approvalPolicy: "untrusted"`` on ``thread/start``; so the driver sends both settings
    there. Returns (remaining args, approval, sandbox).
    """
    args = list(extra_args)
    values: list[str | None] = []
    for key in ("approval_policy", "sandbox_mode"):
        value: str | None = None
        while (hit := _find(args, key)) is not None:
            start, length, raw = hit
            value = value or raw.strip().strip("'\"")
            del args[start : start + length]
        values.append(value)
    return args, values[0], values[1]


def app_server_launch(
    *,
    binary: str,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> Launch:
    """``codex app-server`` with the caller's extra args, minus the policy overrides (lifted)."""
    remaining, _, _ = lift_policy(extra_args)
    return Launch(argv=[binary, "app-server", *remaining], env=dict(env or {}))


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
    argv = [binary, "exec", "--json"]
    if skip_git_check:
        argv.append("--skip-git-repo-check")
    if sandbox is not None:
        argv += ["-c", f'sandbox_mode="{normalize_sandbox(sandbox)}"']
    elif not _sets(extra_args, "sandbox_mode"):
        argv += ["-c", f'sandbox_mode="{DEFAULT_SANDBOX}"']
    if model is not None:
        argv += ["-c", f"model={msgspec.json.encode(model).decode()}"]
    if effort is not None:
        argv += ["-c", f"model_reasoning_effort={msgspec.json.encode(effort).decode()}"]
    argv += list(extra_args)
    if resume_thread is not None:
        argv += ["resume", resume_thread]
    for image in images:
        argv += ["--image", image]
    # "--" keeps a prompt that starts with "-" from being read as a flag.
    return Launch(argv=[*argv, "--", prompt], env=dict(env or {}))


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
