"""require_agent: a missing CLI skips a test locally and fails it under CI=true."""

from pathlib import Path

import pytest

from corral.testing import require_agent


def _empty(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CORRAL_AGENTS_DIR", str(tmp_path / "none"))
    monkeypatch.setenv("PATH", str(tmp_path))


def test_missing_agent_skips_locally(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _empty(monkeypatch, tmp_path)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="claude is not installed"):
        require_agent("claude")


def test_missing_agent_fails_under_ci(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _empty(monkeypatch, tmp_path)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true: claude is not installed"):
        require_agent("claude")


def test_pinned_only_ignores_a_binary_on_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _empty(monkeypatch, tmp_path)
    monkeypatch.setenv("CI", "true")
    exe = tmp_path / "claude"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    assert require_agent("claude") == exe
    with pytest.raises(pytest.fail.Exception):
        require_agent("claude", pinned_only=True)
