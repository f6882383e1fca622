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

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from ..errors import ConfigError
from . import aider, claude, codex, copilot, gemini, hermes, kilo, opencode, pi, qwen
from ._model import Redirection, root_url, v1_url


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


REDIRECTS: dict[str, RedirectFn] = {
    "claude": claude.redirect,
    "codex": codex.redirect,
    "opencode": opencode.redirect,
    "gemini": gemini.redirect,
    "pi": pi.redirect,
    "qwen": qwen.redirect,
    "hermes": hermes.redirect,
    "kilo": kilo.redirect,
    "copilot": copilot.redirect,
    "aider": aider.redirect,
}


def supported() -> list[str]:
    """Agents that have a redirection."""
    return list(REDIRECTS)


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
    fn: Callable[..., Redirection] | None = REDIRECTS.get(agent)
    if fn is None:
        raise ConfigError(
            f"no endpoint redirection for agent {agent!r} (known: {', '.join(REDIRECTS)})"
        )
    return fn(
        base_url=base_url,
        model=model,
        api_key=api_key,
        home=Path(home),
        bypass_permissions=bypass_permissions,
    )


__all__ = ["REDIRECTS", "Redirection", "redirect_for", "root_url", "supported", "v1_url"]
