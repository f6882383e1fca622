"""The launch of one ``gemini -p --output-format stream-json`` process, pure and light: the
builder :class:`~.gemini_exec.GeminiExecAdapter` uses, and its early-launch hook (:mod:`._early`)."""

from __future__ import annotations

from .._record import dataclass, field
from ..errors import ConfigError
from . import _launch
from ._launch import find_binary

TYPE_CHECKING = False  # ``typing`` itself costs start-up (decision 036)
if TYPE_CHECKING:  # nor ``collections`` before the early spawn (decision 057)
    from collections.abc import Mapping, Sequence

    from ._early import EarlyRequest

DEFAULT_BINARY = "gemini"
"""The executable the driver runs when no ``binary`` is given."""

APPROVAL_MODES = ("default", "auto_edit", "yolo", "plan")
"""Gemini CLI 0.61.0's ``--approval-mode`` words (``vendor_permission_mode``)."""

MODEL_FLAGS = ("--model", "-m")


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)


def _has_flag(args: Sequence[str], flags: Sequence[str]) -> bool:
    return any(a in flags or any(a.startswith(f"{f}=") for f in flags) for a in args)


def _at_path(path: str) -> str:
    # Gemini's @-reference ends at an unescaped space.
    return "@" + path.replace("\\", "\\\\").replace(" ", "\\ ")


def build_launch(
    *,
    binary: str,
    prompt: str,
    cwd: str,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    resume: str | None = None,
    model: str | None = None,
    approval_mode: str | None = None,
    files: Sequence[str] = (),
) -> Launch:
    """``gemini --output-format stream-json --skip-trust … --prompt=PROMPT``. Pure.

    ``--prompt=`` keeps a prompt that starts with ``-`` from being read as a flag; ``model`` goes
    on the command line only when ``extra_args`` carry no model flag (the redirection may)."""
    if approval_mode is not None and approval_mode not in APPROVAL_MODES:
        raise ConfigError(
            f"Gemini CLI has no approval mode {approval_mode!r} (one of {', '.join(APPROVAL_MODES)})"
        )
    argv = [binary, "--output-format", "stream-json", "--skip-trust"]
    if model and not _has_flag(extra_args, MODEL_FLAGS):
        argv += ["--model", model]
    if approval_mode is not None:
        argv += ["--approval-mode", approval_mode]
    if resume is not None:
        argv += ["--resume", resume]
    outside: list[str] = []
    if files:  # ``pathlib`` only for attachments: never on ``corral run``'s early path
        from pathlib import Path

        root = Path(cwd).resolve()
        outside = sorted(
            {str(Path(f).parent) for f in files if not Path(f).resolve().is_relative_to(root)}
        )
    for directory in outside:
        argv += ["--include-directories", directory]
    argv += list(extra_args)
    text = " ".join([prompt, *(_at_path(f) for f in files)])
    return Launch(argv=[*argv, f"--prompt={text}"], env=dict(env or {}))


def early_launch(request: EarlyRequest) -> _launch.Launch:
    """The launch of the first prompt's process :class:`~.gemini_exec.GeminiExecAdapter` starts
    for these options (its ``send``)."""
    plan = build_launch(
        binary=find_binary(request.binary, DEFAULT_BINARY),
        prompt=request.prompt,
        cwd=request.cwd,
        extra_args=request.extra_args,
        model=request.model,
    )
    env = {**request.base_env, **plan.env}
    return _launch.Launch(argv=tuple(plan.argv), env=env, cwd=request.cwd)
