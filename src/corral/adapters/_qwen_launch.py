"""Qwen Code's stream-json launch, pure and light: the argv/env builder
:class:`~.qwen.QwenAdapter` uses, and its early-launch hook (:mod:`._early`). What differs from
Claude Code's flags is described in :mod:`.qwen`."""

from __future__ import annotations

from ..errors import ConfigError
from ._launch import Launch, StreamJsonRequest, early_stream_json, merged_env

TYPE_CHECKING = False  # ``typing`` itself costs start-up (decision 036)
if TYPE_CHECKING:
    from collections.abc import Mapping

    from ._early import EarlyRequest

DEFAULT_BINARY = "qwen"
"""The executable Qwen Code's driver runs when no ``binary`` is given."""

APPROVAL_MODES = {
    "default": "default",
    "plan": "plan",
    "acceptEdits": "auto-edit",
    "auto-edit": "auto-edit",
    "bypassPermissions": "yolo",
    "yolo": "yolo",
}
"""corral/Claude permission-mode names → Qwen Code ``--approval-mode`` values."""


def approval_mode(mode: str) -> str:
    try:
        return APPROVAL_MODES[mode]
    except KeyError:
        raise ConfigError(
            f"Qwen Code has no approval mode {mode!r} (one of {', '.join(APPROVAL_MODES)})"
        ) from None


def build_launch(request: StreamJsonRequest, *, base_env: Mapping[str, str]) -> Launch:
    """argv/env/cwd for one Qwen Code stream-json session. Pure."""
    unsupported = [
        name
        for name, asked in (
            ("fork_session", request.fork_session),
            ("settings", request.settings is not None),
            ("effort", bool(request.effort)),
        )
        if asked
    ]
    if unsupported:
        raise ConfigError(f"Qwen Code (stream-json) does not support: {', '.join(unsupported)}")
    argv = [
        request.binary,
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--include-partial-messages",
    ]
    if request.model:
        argv += ["--model", request.model]
    argv += ["--approval-mode", approval_mode(request.permission_mode or "default")]
    if request.resume:
        argv += ["--resume", request.resume]
    if request.session_id:
        argv += ["--session-id", request.session_id]
    for directory in request.add_dirs:
        argv += ["--include-directories", directory]
    argv += request.extra_args
    env = merged_env(base_env, request.env)
    if request.cwd:
        env["PWD"] = request.cwd
    return Launch(argv=tuple(argv), env=env, cwd=request.cwd)


def early_launch(request: EarlyRequest) -> Launch:
    """The launch :class:`~.qwen.QwenAdapter` builds for these options (its ``start``)."""
    return build_launch(
        early_stream_json(request, DEFAULT_BINARY),
        base_env=request.base_env,
    )
