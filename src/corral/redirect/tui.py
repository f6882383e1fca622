"""The first-run answers a vendor TUI asks for once, written as the settings they are.

A TUI on a fresh home stops at dialogs before it takes a prompt; each has a setting that records
the answer, and these functions write that setting into an isolated home (never a user's own):

* Claude Code 2.1.197 (``$CLAUDE_CONFIG_DIR/.claude.json``): ``hasCompletedOnboarding`` (the
  theme picker and the login/connectivity screen, which looks up the vendor's host), the custom API
  key approved (``customApiKeyResponses.approved`` holds the key's last 20 characters) and the
  folder trusted (``projects[cwd].hasTrustDialogAccepted``).
* Codex 0.171.0 (``$CODEX_HOME/config.toml``): ``projects."<cwd>".trust_level = "trusted"`` (the
  "Trust this folder?" screen).

Pure builders: :class:`~corral.redirect.Redirection` values whose ``apply()`` writes the files.
"""

from __future__ import annotations

import json
from pathlib import Path

from ._model import Redirection


def claude_first_run(*, home: Path, cwd: Path, api_key: str) -> Redirection:
    """Onboarding done, ``api_key`` approved and ``cwd`` trusted, for ``CLAUDE_CONFIG_DIR`` =
    ``home/.claude`` (what :func:`corral.redirect.claude.redirect` sets)."""
    config = {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [api_key[-20:]], "rejected": []},
        "projects": {
            str(cwd): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}
        },
    }
    path = home / ".claude" / ".claude.json"
    return Redirection(agent="claude", env={}, files={path: json.dumps(config, indent=2)})


def codex_first_run(*, home: Path, cwd: Path, api_key: str = "") -> Redirection:
    """``cwd`` trusted, for ``CODEX_HOME`` = ``home/.codex`` (what
    :func:`corral.redirect.codex.redirect` sets)."""
    text = f'[projects.{json.dumps(str(cwd))}]\ntrust_level = "trusted"\n'
    return Redirection(agent="codex", env={}, files={home / ".codex" / "config.toml": text})
