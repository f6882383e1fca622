"""``corral run``'s early spawn: the agent started before the driver is imported (decision 044).

:func:`spawn_for_run` runs on the lean path (``cli/_run_fast.py``) before ``cli/_run_main.py``
is imported. For a built-in adapter with an early-launch hook (:mod:`corral.adapters._early`)
and a command line of nothing but the options such a hook takes, it does what
:func:`~corral.cli._run_main.run_command` would do before its spawn, in the same order and with
the same functions — the prompt check, the launch gate (a stale record is not early: the
re-verification stays on today's path), the working directory made absolute and checked — and
then starts the agent (:func:`corral._process._early.spawn_early`). Whatever it cannot decide
here is ``None``, and ``run_command`` does everything as before; whatever it refuses, it refuses
with the error ``run_command`` raises, before anything is spawned.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # ``typing`` itself costs start-up (decision 036)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from .._process._early import EarlyProcess

EARLY_OPTIONS = frozenset(
    {"model", "cwd", "binary", "agent_arg", "idle_timeout", "json_out", "yes"}
)
"""``corral run`` options an early launch may carry (:class:`~corral.adapters._early.EarlyRequest`
holds the launch ones; the rest only shape what corral does with the events). Any other option
given (an intent, a resume, an effort, images…) takes today's path."""


def spawn_for_run(agent: str, prompt: str, params: dict[str, Any]) -> EarlyProcess | None:
    """The agent of ``corral run AGENT PROMPT`` started now, or ``None`` (module docstring)."""
    if set(params) - EARLY_OPTIONS:  # only the options given are in ``params``
        return None
    idle_timeout = params.get("idle_timeout")
    if idle_timeout is not None and idle_timeout < 0:
        return None  # run_command refuses it
    from ..registry._builtin import builtin_id

    canonical = builtin_id(agent)
    if canonical is None:
        return None
    from ..adapters._early import PROMPT_IN_ARGV, EarlyRequest, early_hook

    hook = early_hook(canonical)
    if hook is None:
        return None
    from ..adapters._prompt import check_prompt

    check_prompt(prompt)  # run_command's first refusal (no images on this path)
    from ..registry._gate import gate_check

    if gate_check(canonical)[1] is not None:
        return None  # stale: run_command verifies again before anything starts
    cwd = _resolved(params.get("cwd"))
    if not os.path.isdir(cwd):
        return None  # LaunchOptions.create refuses it
    from ..errors import CorralError

    try:
        launch = hook(
            EarlyRequest(
                cwd=cwd,
                base_env=os.environ,
                model=params.get("model"),
                binary=params.get("binary"),
                extra_args=tuple(params.get("agent_arg") or ()),
                prompt=prompt,
            )
        )
    except CorralError:
        return None  # the driver raises it again, in its own words and place
    if launch.cwd is None:
        return None
    from .._process._early import spawn_early

    return spawn_early(launch.argv, launch.env, launch.cwd, prompted=canonical in PROMPT_IN_ARGV)


def _resolved(cwd: str | Path | None) -> str:
    """``(cwd or Path.cwd()).resolve()`` made absolute as ``LaunchOptions.create`` makes it."""
    return os.path.abspath(os.path.realpath(os.fspath(cwd) if cwd is not None else os.getcwd()))
