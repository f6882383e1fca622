"""The early-spawn hook: an adapter's launch computed without importing its driver (decision 044).

``corral run`` starts the agent before it imports the event loop, the event model and the
adapter's protocol parser (:mod:`corral._process._early`), so that the agent boots while corral
imports the code that reads its output. For that it needs the launch (argv, env, cwd) from light
code: an adapter that can say it declares a hook in :data:`EARLY_LAUNCHES`, a function of one
:class:`EarlyRequest` that returns the :class:`~corral.adapters._launch.Launch` its driver would
build for the same options, by calling the driver's own pure ``build_launch`` (which therefore
lives in a light module of its own: ``_claude_launch``, ``_qwen_launch``, ``_pi_launch``,
``_acp_argv``, ``_gemini_exec_launch``, ``_opencode_run_launch``, ``_codex_argv``).

An :class:`EarlyRequest` carries only the options every such driver takes as they are: model,
working directory, binary and extra arguments. Anything else (an intent, a vendor permission
mode, a resume, an effort, images) is not an early launch: ``corral run`` takes today's path,
where the adapter refuses or renders it before anything is spawned. Nothing relies on a hook and
its driver agreeing: the driver still builds its launch, and the hand-over
(:class:`corral._process._adopt.Handover`) gives it the early process only when the two are equal
to the byte, else the early one is discarded and the driver starts its own;
``tests/unit/adapters/test_early_launch.py`` holds every hook equal to its driver.

Light means: no asyncio, no event model, no parser, no ``corral.adapters.base``.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # ``typing`` itself costs start-up (decision 036)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from ._launch import Launch

EARLY_LAUNCHES: dict[str, str] = {
    "claude-code": "corral.adapters._claude_launch:early_launch",
    "qwen": "corral.adapters._qwen_launch:early_launch",
    "pi": "corral.adapters._pi_launch:early_launch",
    "gemini": "corral.adapters._acp_argv:early_gemini",
    "hermes": "corral.adapters._acp_argv:early_hermes",
    "gemini-exec": "corral.adapters._gemini_exec_launch:early_launch",
    "opencode-run": "corral.adapters._opencode_run_launch:early_launch",
    "codex": "corral.adapters._codex_argv:early_app_server",
    "codex-exec": "corral.adapters._codex_argv:early_exec",
}
"""Built-in adapter id → ``module:function`` of its early launch (a light module)."""

PROMPT_IN_ARGV = frozenset({"gemini-exec", "opencode-run", "codex-exec"})
"""Hooks whose launch carries the prompt: the early process starts the turn at once (not waiting
on its stdin), so a hand-over that does not match refuses rather than run the prompt twice."""


class EarlyRequest:
    """The options of an early launch, normalised as the driver normalises them."""

    __slots__ = ("base_env", "binary", "cwd", "extra_args", "model", "prompt")

    def __init__(
        self,
        *,
        cwd: str,
        base_env: Mapping[str, str],
        model: str | None = None,
        binary: str | None = None,
        extra_args: tuple[str, ...] = (),
        prompt: str = "",
    ) -> None:
        self.cwd = cwd
        """Absolute, as ``LaunchOptions.create`` makes it."""
        self.base_env = base_env
        """The environment the driver starts from (``os.environ`` for ``corral run``)."""
        self.model = model or None
        self.binary = binary or None
        """As given (``--binary``); the hook resolves the default as the driver does."""
        self.extra_args = tuple(extra_args)
        self.prompt = prompt
        """The first prompt: a one-process-per-prompt driver puts it in its argv."""


def early_hook(adapter_id: str) -> Callable[[EarlyRequest], Launch] | None:
    """The early-launch hook of a built-in id (not an alias), or ``None`` when it has none."""
    ref = EARLY_LAUNCHES.get(adapter_id)
    if ref is None:
        return None
    module, _, name = ref.partition(":")
    # ``__import__``, not ``importlib``: that package's __init__ loads ``warnings`` (decision 057)
    __import__(module)
    hook: Callable[[EarlyRequest], Launch] = getattr(sys.modules[module], name)
    return hook
