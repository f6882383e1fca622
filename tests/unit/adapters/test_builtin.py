from pathlib import Path

import pytest

from corral.adapters import BUILTIN_ADAPTERS
from corral.adapters.base import contract_problems, find_binary
from corral.errors import AdapterNotFoundError
from corral.registry import Registry
from corral.sessions._resolve import AdapterResolver


@pytest.mark.parametrize("adapter_id", sorted(BUILTIN_ADAPTERS))
def test_every_builtin_adapter_loads_and_keeps_the_contract(adapter_id: str) -> None:
    registry = Registry(entry_points=None, use_env=False, use_dropins=False)
    cls = registry.resolve(adapter_id)
    assert cls.agent_id == adapter_id
    assert registry.get(adapter_id).source == "builtin"
    assert contract_problems(cls) == []


def test_aliases_and_unknown_ids() -> None:
    registry = Registry(entry_points=None, use_env=False, use_dropins=False)
    assert registry.resolve("claude") is registry.resolve("claude-code")
    with pytest.raises(AdapterNotFoundError, match="no adapter named 'no-such-agent'"):
        registry.resolve("no-such-agent")
    with pytest.raises(AdapterNotFoundError):
        AdapterResolver(use_env=False, use_entry_points=False)("no-such-agent")


def test_registry_session_manager_and_run_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CORRAL_HOME", str(tmp_path))
    from corral.cli.run import adapter_class

    registry = Registry()
    for adapter_id in ("claude-code", "qwen", "codex"):
        cls = registry.resolve(adapter_id)
        assert registry.adapter_class(adapter_id) is cls
        assert AdapterResolver(use_env=False, use_entry_points=False)(adapter_id) is cls
        assert adapter_class(adapter_id) is cls


def test_find_binary_prefers_the_given_path_then_pinned_then_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert find_binary("/opt/x/claude", "claude") == "/opt/x/claude"
    monkeypatch.setenv("CORRAL_AGENTS_DIR", str(tmp_path / "empty"))
    monkeypatch.setenv("PATH", str(tmp_path))
    assert find_binary(None, "not-installed-anywhere") == "not-installed-anywhere"
    exe = tmp_path / "not-installed-anywhere"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    assert find_binary(None, "not-installed-anywhere") == str(exe)
