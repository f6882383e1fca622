"""Point an agent CLI at a model endpoint: pure functions, one module per CLI.

    >>> from pathlib import Path
    >>> from corral.redirect import redirect_for
    >>> r = redirect_for("pi", base_url="http://127.0.0.1:8000", model="fake-model",
    ...                  api_key="test", home=Path("/tmp/h"))
    >>> r.argv
    ('--provider', 'corral', '--model', 'fake-model', '--offline')
    >>> r.apply()                      # writes /tmp/h/.pi/agent/models.json

``base_url`` is the server root (``http://127.0.0.1:PORT``; a trailing ``/v1`` is accepted and
dropped): each CLI module adds the path its wire API needs. ``home`` is an isolated home directory:
every redirection sets ``HOME`` and the XDG dirs to it and keeps the CLI's own state under it, and
switches off the CLI's telemetry and update checks. The launcher and the real-CLI tests share this.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError
from ._model import Redirection, root_url, v1_url

TYPE_CHECKING = False  # ``typing`` costs ``corral launch``'s start-up (decision 036)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Protocol

    class RedirectFn(Protocol):
        def __call__(
            self,
            *,
            base_url: str,
            model: str,
            api_key: str,
            home: Path,
            bypass_permissions: bool = False,
        ) -> Redirection: ...


_AGENTS = (
    "claude",
    "codex",
    "opencode",
    "gemini",
    "pi",
    "qwen",
    "hermes",
    "kilo",
    "copilot",
    "aider",
)
"""Each has a module of this package, named after it, with a ``redirect`` function. They load
on first use: ``corral launch`` needs one of them, not ten (benchmark P3)."""


def _redirect_fn(agent: str) -> Callable[..., Redirection]:
    # ``__import__``, not ``importlib.import_module``: the latter bypasses ``-X importtime``,
    # which tests/unit/launch/test_launch_fast.py reads to keep the launch path lean.
    module = __import__(f"{__name__}.{agent}", fromlist=["redirect"])
    fn: Callable[..., Redirection] = module.redirect
    return fn


def __getattr__(name: str) -> Any:
    if name == "REDIRECTS":  # agent -> its redirect function (imports every module)
        redirects: dict[str, RedirectFn] = {a: _redirect_fn(a) for a in _AGENTS}
        return redirects
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def supported() -> list[str]:
    """Agents that have a redirection."""
    return list(_AGENTS)


def redirect_for(
    agent: str,
    *,
    base_url: str,
    model: str,
    api_key: str,
    home: Path,
    bypass_permissions: bool = False,
) -> Redirection:
    """The redirection of ``agent``; raises ``ConfigError`` for an agent without one.

    ``bypass_permissions`` asks for whatever the CLI needs to run with approvals bypassed
    (today only Claude Code, which wants ``IS_SANDBOX=1`` when running as root).
    """
    if agent not in _AGENTS:
        raise ConfigError(
            f"no endpoint redirection for agent {agent!r} (known: {', '.join(_AGENTS)})"
        )
    return _redirect_fn(agent)(
        base_url=base_url,
        model=model,
        api_key=api_key,
        home=Path(home),
        bypass_permissions=bypass_permissions,
    )


__all__ = ["REDIRECTS", "Redirection", "redirect_for", "root_url", "supported", "v1_url"]
