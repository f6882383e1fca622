"""Codex (app-server and exec): an intent as a sandbox mode, an approval policy and config.

* ``ask`` / ``review``: the ``read-only`` sandbox (seed 001). On the app-server the approval
  policy is ``untrusted``: every command that is not known-safe is asked of the host, where corral's
  guard denies anything the intent does not grant.
* ``work`` / ``act-pr``: the ``workspace-write`` sandbox with ``/tmp`` and ``$TMPDIR`` excluded
  from the writable roots and no network, policy ``untrusted`` — commands codex does not know as
  safe are asked of the host and granted only when the intent's table grants them (a granted
  ``git push`` then runs outside the sandbox, on the host's approval).
* ``full``: ``danger-full-access`` with policy ``never``.

``codex exec`` never asks (its policy is fixed to ``never``), so only the sandbox applies there: it
can enforce ``ask`` and ``review`` (read-only), and ``full``; ``work`` would either forbid ``git
commit`` (``.git`` is outside what the sandbox lets it write) or allow ``git push`` — refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._render import Rendering
from ._table import Intent

SANDBOX: dict[Intent, str] = {
    Intent.ASK: "read-only",
    Intent.REVIEW: "read-only",
    Intent.WORK: "workspace-write",
    Intent.ACT_PR: "workspace-write",
    Intent.FULL: "danger-full-access",
}

APPROVAL: dict[Intent, str] = {
    Intent.ASK: "untrusted",
    Intent.REVIEW: "untrusted",
    Intent.WORK: "untrusted",
    Intent.ACT_PR: "untrusted",
    Intent.FULL: "never",
}

WORKSPACE_WRITE_CONFIG: dict[str, Any] = {
    "sandbox_workspace_write": {
        "network_access": False,
        "exclude_tmpdir_env_var": True,
        "exclude_slash_tmp": True,
    }
}
"""Writable roots are the working directory only (no ``/tmp``, no ``$TMPDIR``, no network)."""


def render(intent: Intent, allowed_commands: Sequence[str], cwd: str) -> Rendering:
    """The app-server driver: ``thread/start`` sandbox, approval policy and config."""
    settings: dict[str, Any] = {"sandbox": SANDBOX[intent], "approval_policy": APPROVAL[intent]}
    if SANDBOX[intent] == "workspace-write":
        settings["config"] = WORKSPACE_WRITE_CONFIG
    return Rendering(intent=intent, settings=settings)


EXEC_INTENTS = frozenset({Intent.ASK, Intent.REVIEW, Intent.FULL})


def render_exec(intent: Intent, allowed_commands: Sequence[str], cwd: str) -> Rendering:
    """``codex exec``: the sandbox alone (exec never asks)."""
    if intent not in EXEC_INTENTS:
        raise ValueError(f"codex exec cannot enforce {intent}")
    return Rendering(intent=intent, settings={"sandbox": SANDBOX[intent]})
