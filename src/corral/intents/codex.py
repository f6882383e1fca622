"""Codex (app-server and exec): an intent as a sandbox mode, an approval policy and config.

* ``ask`` / ``review``: the ``read-only`` sandbox (seed 001). On the app-server the approval
  policy is ``untrusted``: every command that is not known-safe is asked of the host, where corral's
  guard denies anything the intent does not grant.
* ``work`` / ``act-pr``: policy ``untrusted`` — codex runs only the commands it knows as
  read-only on its own and asks the host about every other one, which corral grants only when the
  intent's table does (:mod:`._guard`). The sandbox is ``danger-full-access``: in codex 0.171 the
  ``workspace-write`` sandbox keeps ``.git`` read-only even for an approved command, so ``git
  commit`` (granted by both intents) could never run, and ``git push`` (granted by act-pr) could
  not reach its remote. Tried and recorded in docs/intents.md.
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
    Intent.WORK: "danger-full-access",
    Intent.ACT_PR: "danger-full-access",
    Intent.FULL: "danger-full-access",
}

APPROVAL: dict[Intent, str] = {
    Intent.ASK: "untrusted",
    Intent.REVIEW: "untrusted",
    Intent.WORK: "untrusted",
    Intent.ACT_PR: "untrusted",
    Intent.FULL: "never",
}


def render(intent: Intent, allowed_commands: Sequence[str], cwd: str) -> Rendering:
    """The app-server driver: ``thread/start`` sandbox, approval policy and config."""
    settings: dict[str, Any] = {"sandbox": SANDBOX[intent], "approval_policy": APPROVAL[intent]}
    return Rendering(intent=intent, settings=settings)


EXEC_INTENTS = frozenset({Intent.ASK, Intent.REVIEW, Intent.FULL})


def render_exec(intent: Intent, allowed_commands: Sequence[str], cwd: str) -> Rendering:
    """``codex exec``: the sandbox alone (exec never asks)."""
    if intent not in EXEC_INTENTS:
        raise ValueError(f"codex exec cannot enforce {intent}")
    return Rendering(intent=intent, settings={"sandbox": SANDBOX[intent]})
