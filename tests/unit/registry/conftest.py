"""Every registry test gets its own empty ``CORRAL_HOME``; the pinned-agents cache stays real."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def corral_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "corral-home"
    monkeypatch.setenv("CORRAL_HOME", str(home))
    monkeypatch.delenv("CORRAL_EXT_ADAPTERS_DIR", raising=False)
    return home
