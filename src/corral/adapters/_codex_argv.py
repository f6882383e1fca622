"""The argv of ``codex app-server`` and ``codex exec``, pure and light: what the two Codex
drivers (:class:`~.codex.CodexAdapter`, :class:`~._codex_exec.CodexExecAdapter`) spawn, the
policy overrides the app-server driver lifts out of the extra arguments, the native executable
both run instead of the npm wrapper, and their early-launch hooks (:mod:`._early`).

Light as :mod:`._early` means it: no msgspec, no generated wire models, no ``corral.adapters.base``.
"""

from __future__ import annotations

from . import _launch

TYPE_CHECKING = False  # ``typing`` itself costs start-up (decision 036)
if TYPE_CHECKING:
    from collections.abc import Sequence

    from ._early import EarlyRequest

DEFAULT_BINARY = "codex"
DEFAULT_SANDBOX = "workspace-write"
POLICY_KEYS = ("approval_policy", "sandbox_mode")
"""The ``-c key=value`` overrides the driver sends in ``thread/start`` instead of argv."""


def find(args: Sequence[str], key: str) -> tuple[int, int, str] | None:
    """(start, length, TOML value) of the last ``-c key=value`` in ``args``."""
    if not any(a in ("-c", "--config") or a.startswith("--config=") for a in args):
        return None  # the common case, without importing ``re`` on the early path
    import re

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
    for key in POLICY_KEYS:
        value: str | None = None
        while (hit := find(args, key)) is not None:
            start, length, raw = hit
            value = value or raw.strip().strip("'\"")
            del args[start : start + length]
        values.append(value)
    return args, values[0], values[1]


def app_server_argv(binary: str, extra_args: Sequence[str] = ()) -> list[str]:
    """``codex app-server`` with the caller's extra args, minus the policy overrides (lifted)."""
    remaining, _, _ = lift_policy(extra_args)
    return [binary, "app-server", *remaining]


def toml_string(value: str) -> str:
    """``value`` as a TOML basic string for ``-c key=value``: the JSON string, which TOML reads
    alike (JSON's escapes are TOML's). A lone surrogate raises ``UnicodeEncodeError``."""
    value.encode()
    import json  # not on the early path unless a model is given

    return json.dumps(value, ensure_ascii=False)


def exec_argv(
    *,
    binary: str,
    prompt: str,
    extra_args: Sequence[str] = (),
    resume_thread: str | None = None,
    model: str | None = None,
    effort: str | None = None,
    sandbox: str | None = None,
    images: Sequence[str] = (),
    skip_git_check: bool = True,
) -> list[str]:
    """``codex exec --json … PROMPT`` or ``codex exec --json … resume THREAD PROMPT``;
    ``sandbox`` is a normalised mode (the driver normalises it), else the default unless
    ``extra_args`` set one."""
    argv = [binary, "exec", "--json"]
    if skip_git_check:
        argv.append("--skip-git-repo-check")
    if sandbox is not None:
        argv += ["-c", f'sandbox_mode="{sandbox}"']
    elif find(extra_args, "sandbox_mode") is None:
        argv += ["-c", f'sandbox_mode="{DEFAULT_SANDBOX}"']
    if model is not None:
        argv += ["-c", f"model={toml_string(model)}"]
    if effort is not None:
        argv += ["-c", f"model_reasoning_effort={toml_string(effort)}"]
    argv += list(extra_args)
    if resume_thread is not None:
        argv += ["resume", resume_thread]
    for image in images:
        argv += ["--image", image]
    # "--" keeps a prompt that starts with "-" from being read as a flag.
    return [*argv, "--", prompt]


def native_argv_env(argv: list[str], env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """``argv`` and the full ``env`` to spawn, with codex's npm wrapper (``bin/codex.js``, a Node
    start per process) replaced by the native executable it would run, and the environment it
    would give it (decision 038); unchanged when ``argv[0]`` is not a reviewed wrapper."""
    from ..agents._native import native_entry

    entry = native_entry(argv[0], env) if argv else None
    if entry is None:
        return argv, env
    return [entry.command, *argv[1:]], entry.environment(env)


def early_app_server(request: EarlyRequest) -> _launch.Launch:
    """The process :class:`~.codex.CodexAdapter` starts for these options (its ``start``): the
    model goes in ``thread/start``, not argv, so only the binary and extra arguments count."""
    argv = app_server_argv(_launch.find_binary(request.binary, DEFAULT_BINARY), request.extra_args)
    argv, env = native_argv_env(argv, dict(request.base_env))
    return _launch.Launch(argv=tuple(argv), env=env, cwd=request.cwd)


def early_exec(request: EarlyRequest) -> _launch.Launch:
    """The first prompt's process :class:`~._codex_exec.CodexExecAdapter` starts for these
    options (its ``send``)."""
    argv = exec_argv(
        binary=_launch.find_binary(request.binary, DEFAULT_BINARY),
        prompt=request.prompt,
        extra_args=request.extra_args,
        model=request.model,
    )
    argv, env = native_argv_env(argv, dict(request.base_env))
    return _launch.Launch(argv=tuple(argv), env=env, cwd=request.cwd)
