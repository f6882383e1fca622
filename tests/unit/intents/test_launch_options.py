"""LaunchOptions and construct(): normalised once, unsupported options and unenforceable intents
refused by name for every built-in adapter, intents rendered into the adapter's own arguments.
Nothing here starts a process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from corral.adapters import BUILTIN_ADAPTERS
from corral.adapters._options import OPTION_NAMES, SOFT_OPTIONS, LaunchOptions, guard_of
from corral.adapters.base import BaseAdapter, construct, supported_options
from corral.errors import ConfigError, IntentRefused, UnsupportedOperation
from corral.intents import Intent
from corral.registry import Registry

ADAPTERS = sorted(BUILTIN_ADAPTERS)

EXAMPLE: dict[str, Any] = {
    "model": "m",
    "effort": "high",
    "binary": "/bin/true",
    "env": {"A": "1"},
    "extra_args": ("--x",),
    "resume_session_id": "abc",
    "vendor_permission_mode": "default",
}


def builtin_adapter_class(adapter_id: str) -> type[BaseAdapter] | None:
    """A built-in adapter's class, resolved by the registry (no drop-ins, no entry points)."""
    registry = Registry(entry_points=None, use_env=False, use_dropins=False)
    return registry.adapter_class(adapter_id)


def cls_of(adapter_id: str) -> type[BaseAdapter]:
    cls = builtin_adapter_class(adapter_id)
    assert cls is not None
    return cls


def test_cwd_is_made_absolute_and_must_exist(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    assert LaunchOptions.create(cwd="sub").cwd == str(tmp_path / "sub")
    assert LaunchOptions.create().cwd == str(tmp_path)
    with pytest.raises(ConfigError, match="does not exist"):
        LaunchOptions.create(cwd=tmp_path / "missing")
    (tmp_path / "file").write_text("")
    with pytest.raises(ConfigError, match="not a directory"):
        LaunchOptions.create(cwd=tmp_path / "file")


def test_intent_and_commands_are_parsed_and_checked(tmp_path: Path) -> None:
    options = LaunchOptions.create(
        cwd=tmp_path, intent="act-pr", allowed_commands="python3 -m unittest, npm  test,"
    )
    assert options.intent is Intent.ACT_PR
    assert options.allowed_commands == ("python3 -m unittest", "npm test")
    assert options.given() == ["cwd", "intent", "allowed_commands"]
    with pytest.raises(ConfigError, match="unknown intent"):
        LaunchOptions.create(cwd=tmp_path, intent="yolo")
    with pytest.raises(ConfigError, match="need an intent"):
        LaunchOptions.create(cwd=tmp_path, allowed_commands="make")
    with pytest.raises(ConfigError, match="shell operator"):
        LaunchOptions.create(cwd=tmp_path, intent="work", allowed_commands="make; rm -rf /")
    with pytest.raises(ConfigError, match="cannot be combined"):
        LaunchOptions.create(cwd=tmp_path, intent="ask", vendor_permission_mode="plan")
    assert LaunchOptions.create(cwd=tmp_path, model="", effort="").given() == ["cwd"]


def test_full_is_never_a_default(tmp_path: Path) -> None:
    assert LaunchOptions.create(cwd=tmp_path).intent is None
    assert LaunchOptions.__dataclass_fields__["intent"].default is None


@pytest.mark.parametrize("adapter_id", ADAPTERS)
def test_every_unsupported_option_is_refused_by_name(adapter_id: str, tmp_path: Path) -> None:
    cls = cls_of(adapter_id)
    supported = supported_options(cls)
    for name in OPTION_NAMES:
        if name in SOFT_OPTIONS or name in ("intent", "allowed_commands"):
            continue
        options = LaunchOptions.create(cwd=tmp_path, **{name: EXAMPLE[name]})
        if name in supported:
            construct(cls, options)  # accepted and passed on (no process starts)
        else:
            with pytest.raises(UnsupportedOperation, match=repr(name)) as info:
                construct(cls, options)
            assert info.value.adapter_id == cls.agent_id


def test_effort_on_an_agent_without_effort_names_the_option(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedOperation, match="'effort'"):
        construct(cls_of("gemini"), LaunchOptions.create(cwd=tmp_path, effort="high"))


@pytest.mark.parametrize("adapter_id", ADAPTERS)
@pytest.mark.parametrize("intent", list(Intent))
def test_every_intent_is_enforced_or_refused(
    adapter_id: str, intent: Intent, tmp_path: Path
) -> None:
    cls = cls_of(adapter_id)
    options = LaunchOptions.create(cwd=tmp_path, intent=intent)
    if intent not in cls.enforceable_intents:
        with pytest.raises(IntentRefused) as info:
            construct(cls, options)
        assert (info.value.adapter_id, info.value.intent) == (cls.agent_id, intent.value)
        assert info.value.reason and info.value.exit_code == 5
        return
    adapter = construct(cls, options)
    assert adapter.launch_options is options
    guard = guard_of(adapter)
    assert guard is not None and guard.intent is intent


def test_offered_intents_are_the_proven_ones() -> None:
    offered = {a: cls_of(a).enforceable_intents for a in ADAPTERS}
    for proven in ("claude-code", "codex", "qwen", "qwen-acp", "opencode", "opencode-acp"):
        assert offered[proven] == frozenset(Intent), proven
    for read_only in ("codex-exec", "gemini"):
        assert offered[read_only] == {Intent.ASK, Intent.REVIEW, Intent.FULL}, read_only
    for other in ("pi", "hermes"):
        assert offered[other] == {Intent.FULL}, other


def test_claude_intent_lands_in_its_own_arguments(tmp_path: Path) -> None:
    adapter: Any = construct(
        cls_of("claude-code"),
        LaunchOptions.create(cwd=tmp_path, intent="ask", extra_args=["--verbose"]),
    )
    assert adapter.permission_mode == "plan"
    assert adapter.extra_args[0] == "--verbose"  # the caller's args first, the intent's after
    assert "--settings" in adapter.extra_args and "--disallowedTools" in adapter.extra_args


def test_codex_intent_lands_in_thread_settings(tmp_path: Path) -> None:
    adapter: Any = construct(cls_of("codex"), LaunchOptions.create(cwd=tmp_path, intent="review"))
    assert (adapter.sandbox, adapter.approval_policy) == ("read-only", "untrusted")


def test_keyword_callers_get_the_same_checks(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedOperation, match="'vendor_permission_mode'"):
        construct(cls_of("pi"), cwd=str(tmp_path), permission_mode="ask")
    with pytest.raises(TypeError):
        construct(cls_of("pi"), colour="red")


def test_corral_run_refuses_before_starting_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    from corral.cli import build_app
    from corral.cli._common import run_guarded

    def corral(*args: str) -> int:
        monkeypatch.setattr(sys, "argv", ["corral", *args])
        return run_guarded(build_app())

    # pi does not exist here: the refusals come before any process could start
    binary = str(tmp_path / "no-such-pi")
    assert corral("run", "pi", "hi", "--intent", "ask", "--binary", binary) == 5
    assert "cannot enforce intent 'ask'" in capsys.readouterr().err
    assert corral("run", "gemini", "hi", "--effort", "high", "--binary", binary) == 1
    assert "'effort'" in capsys.readouterr().err
    assert corral("run", "pi", "hi", "--intent", "sloppy", "--binary", binary) == 2
    assert corral("run", "pi", "hi", "--allowed-commands", "make", "--binary", binary) == 2
