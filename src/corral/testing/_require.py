"""The one rule for tests that need a pinned agent CLI: skip locally, fail under ``CI=true``."""

from __future__ import annotations

import os
from pathlib import Path

from .. import agents


def require_agent(name: str, *, pinned_only: bool = False) -> Path:
    """The binary of agent ``name`` for a test, or the test stops.

    Missing (or, with ``pinned_only``, found only on PATH rather than in corral's pinned install):
    ``pytest.skip`` with a one-line reason locally, ``pytest.fail`` when ``CI=true`` — in CI a
    real-CLI test must run.
    """
    import pytest

    if pinned_only:
        (row,) = agents.status([name])
        found = Path(row.path) if row.source == "pinned" and row.path else None
    else:
        found = agents.locate(name)
    if found is not None:
        return found
    reason = f"{name} is not installed (run `corral agents install {name}`)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: {reason}", pytrace=False)
    pytest.skip(reason)
