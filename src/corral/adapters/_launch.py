"""What it takes to start an agent process, as plain data (built by pure ``build_launch`` functions).

Plain value classes (:mod:`corral._record`, not msgspec structs): ``corral run`` builds a
:class:`Launch` before it spawns the agent, and msgspec is kept off that path (decision 049).
"""

from __future__ import annotations

from .._record import dataclass, field

TYPE_CHECKING = False  # ``typing`` itself costs start-up (decision 036)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ._early import EarlyRequest


@dataclass(frozen=True, kw_only=True)
class Launch:
    """argv, the complete environment and the working directory of one agent process."""

    argv: tuple[str, ...]
    env: dict[str, str]
    cwd: str | None = None


@dataclass(frozen=True, kw_only=True)
class StreamJsonRequest:
    """Everything a stream-json session (Claude Code or Qwen Code) can be asked to start with."""

    binary: str
    cwd: str | None = None
    model: str | None = None
    permission_mode: str | None = None
    resume: str | None = None
    """An earlier session id to continue."""
    session_id: str | None = None
    """A fresh session's id, chosen by us (a UUID)."""
    fork_session: bool = False
    """With ``resume``: continue the conversation under a new session id."""
    add_dirs: tuple[str, ...] = ()
    settings: dict[str, Any] | None = None
    """Settings for this run only (Claude: ``--settings <json>``)."""
    effort: str | None = None
    extra_args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    """Added to (and winning over) the base environment."""


def merged_env(
    base: Mapping[str, str], extra: Mapping[str, str], drop: tuple[str, ...] = ()
) -> dict[str, str]:
    env = {k: v for k, v in base.items() if k not in drop}
    env.update(extra)
    return env


def find_binary(binary: str | None, name: str) -> str:
    """The executable to launch: the one given, else ``name`` found the way detection finds it
    (:func:`corral.registry.resolve_executable_path`: the pinned install, then PATH)."""
    if binary:
        return binary
    from ..registry._resolve import resolve_executable_path

    found = resolve_executable_path(name)
    return found.path if found is not None else name


def early_stream_json(request: EarlyRequest, default_binary: str) -> StreamJsonRequest:
    """The stream-json request a driver (Claude Code, Qwen Code) makes for an early launch's
    options (:mod:`._early`): only the binary, working directory, model and extra arguments."""
    return StreamJsonRequest(
        binary=find_binary(request.binary, default_binary),
        cwd=request.cwd,
        model=request.model,
        extra_args=request.extra_args,
    )
