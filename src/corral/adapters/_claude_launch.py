"""Claude Code's launch, pure and light: the argv/env builder :class:`~.claude.ClaudeAdapter` uses,
and its early-launch hook (:mod:`._early`). The flags are described in :mod:`.claude`."""

from __future__ import annotations

import os

from ._launch import Launch, StreamJsonRequest, early_stream_json, merged_env

TYPE_CHECKING = False  # ``typing`` itself costs start-up (decision 036)
if TYPE_CHECKING:
    from collections.abc import Mapping

    from ._early import EarlyRequest

DEFAULT_BINARY = "claude"
"""The executable Claude Code's driver runs when no ``binary`` is given."""

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
        import msgspec  # only with settings (an intent): never on the early path

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


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def early_launch(request: EarlyRequest) -> Launch:
    """The launch :class:`~.claude.ClaudeAdapter` builds for these options (its ``start``)."""
    return build_launch(
        early_stream_json(request, DEFAULT_BINARY),
        base_env=request.base_env,
        as_root=is_root(),
    )
