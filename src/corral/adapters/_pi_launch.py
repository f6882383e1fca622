"""Pi's RPC launch, pure and light: the argv builder :class:`~.pi.PiAdapter` uses, and its
early-launch hook (:mod:`._early`)."""

from __future__ import annotations

from ._launch import Launch, find_binary

TYPE_CHECKING = False  # ``typing`` itself costs start-up (decision 036)
if TYPE_CHECKING:
    from collections.abc import Sequence

    from ._early import EarlyRequest

DEFAULT_BINARY = "pi"
"""The executable Pi's driver runs when no ``binary`` is given."""


def build_pi_argv(
    *,
    binary: str,
    model: str | None = None,
    effort: str | None = None,
    resume: str | None = None,
    extra_args: Sequence[str] = (),
) -> list[str]:
    """argv of ``pi --mode rpc``; ``extra_args`` win (a ``--model`` there is not repeated)."""
    argv = [binary, "--mode", "rpc"]
    if model and "--model" not in extra_args:
        argv += ["--model", model]
    if effort and "--thinking" not in extra_args:
        argv += ["--thinking", effort]
    if resume:
        argv += ["--session", resume]
    return argv + list(extra_args)


def early_launch(request: EarlyRequest) -> Launch:
    """The launch :class:`~.pi.PiAdapter` starts for these options (its ``start``): the caller's
    environment whole, in the working directory."""
    argv = build_pi_argv(
        binary=find_binary(request.binary, DEFAULT_BINARY),
        model=request.model,
        extra_args=request.extra_args,
    )
    return Launch(argv=tuple(argv), env=dict(request.base_env), cwd=request.cwd)
