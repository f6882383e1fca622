"""argv/env of one ``opencode run --format json`` process (pure; table-tested without a process),
and the early-launch hook of its first prompt (:mod:`._early`)."""

from __future__ import annotations

from ..errors import ConfigError
from ._launch import Launch, find_binary

TYPE_CHECKING = False  # ``typing`` itself costs start-up (decision 036)
if TYPE_CHECKING:  # nor ``collections`` before the early spawn (decision 057)
    from collections.abc import Mapping, Sequence

    from ._early import EarlyRequest

DEFAULT_BINARY = "opencode"
"""The executable :class:`~.opencode_run.OpenCodeRunAdapter` runs when no ``binary`` is given."""


def check_model(model: str) -> str:
    """``opencode run -m`` takes ``provider/model``; a bare name ends the run with OpenCode's
    "Unexpected server error" (1.18.33), so it is refused here, before any process starts."""
    provider, _, model_id = model.partition("/")
    if not provider or not model_id:
        raise ConfigError(
            f"opencode run takes a model as provider/model (e.g. corral/fake-model), not {model!r}"
        )
    return model


def run_launch(
    *,
    binary: str,
    prompt: str,
    cwd: str,
    env: Mapping[str, str],
    extra_args: Sequence[str] = (),
    session_id: str | None = None,
    model: str | None = None,
    files: Sequence[str] = (),
) -> Launch:
    """``opencode run --format json --thinking [-s SID] [-m P/M] [-f FILE…] … -- PROMPT``.

    ``--thinking`` only makes run print the reasoning parts it already receives. ``PWD`` is set to
    ``cwd``: OpenCode 1.18.33 takes its project directory from ``$PWD`` over the process's real
    working directory, so an inherited ``PWD`` would run the agent in the caller's directory.
    """
    argv = [binary, "run", "--format", "json", "--thinking"]
    if session_id is not None:
        argv += ["--session", session_id]
    if model is not None:
        argv += ["--model", check_model(model)]
    for path in files:
        argv += ["--file", path]
    argv += list(extra_args)
    # "--" ends --file's list (a yargs array) and keeps a prompt that starts with "-" a message.
    return Launch(argv=(*argv, "--", prompt), env={**env, "PWD": cwd}, cwd=cwd)


def early_launch(request: EarlyRequest) -> Launch:
    """The launch of the first prompt's process :class:`~.opencode_run.OpenCodeRunAdapter` starts
    for these options (its ``send``)."""
    return run_launch(
        binary=find_binary(request.binary, DEFAULT_BINARY),
        prompt=request.prompt,
        cwd=request.cwd,
        env=request.base_env,
        extra_args=request.extra_args,
        model=request.model,
    )
