"""The ACP launch, pure and light: the argv/env builder :class:`~._acp.AcpAdapter` uses, the
launch words of the ACP vendors that have an early launch (:mod:`._early`), and their hooks."""

from __future__ import annotations

import os

from .._record import dataclass
from ._launch import Launch, find_binary

TYPE_CHECKING = False  # ``typing`` itself costs start-up (decision 036)
if TYPE_CHECKING:  # nor ``collections`` before the early spawn (decision 057)
    from collections.abc import Mapping, Sequence

    from ._early import EarlyRequest


@dataclass(frozen=True)
class AcpLaunch:
    """How to start one ACP agent: the full argv and the environment overlay."""

    argv: tuple[str, ...]
    env: Mapping[str, str]

    def environ(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        merged = dict(os.environ if base is None else base)
        merged.update(self.env)
        return merged


def _has_flag(args: Sequence[str], flags: Sequence[str]) -> bool:
    return any(a in flags or any(a.startswith(f + "=") for f in flags) for a in args)


def build_launch(
    binary: str,
    acp_args: Sequence[str],
    *,
    model: str | None = None,
    model_flags: Sequence[str] = (),
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> AcpLaunch:
    """``binary acp_args… [--model M] extra_args…`` and the env overlay.

    ``model`` goes on the command line only when the agent takes a model flag (``model_flags``,
    the first is used) and ``extra_args`` do not already carry one (endpoint redirection may).
    """
    argv = [binary, *acp_args]
    if model and model_flags and not _has_flag(extra_args, model_flags):
        argv += [model_flags[0], model]
    argv += list(extra_args)
    return AcpLaunch(argv=tuple(argv), env=dict(env or {}))


@dataclass(frozen=True)
class AcpVendor:
    """How one vendor's CLI is started under ACP (its adapter class reads these)."""

    cli_binary: str
    acp_args: tuple[str, ...]
    model_flags: tuple[str, ...] = ()

    def early_launch(self, request: EarlyRequest) -> Launch:
        """The launch :class:`~._acp.AcpAdapter` starts for these options (its ``_spawn``)."""
        launch = build_launch(
            find_binary(request.binary, self.cli_binary),
            self.acp_args,
            model=request.model,
            model_flags=self.model_flags,
            extra_args=request.extra_args,
        )
        return Launch(argv=launch.argv, env=launch.environ(request.base_env), cwd=request.cwd)


GEMINI = AcpVendor("gemini", ("--acp", "--skip-trust"), ("--model", "-m"))
"""``gemini --acp --skip-trust [--model M]`` (:mod:`.gemini`)."""
HERMES = AcpVendor("hermes", ("acp",))
"""``hermes acp`` (:mod:`.hermes`; the model is in its config file)."""

early_gemini = GEMINI.early_launch
early_hermes = HERMES.early_launch
