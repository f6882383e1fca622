"""Every built-in driver normalises its standard launch options in one place
(``BaseAdapter.take_options``): the same ``cwd``, the same refusals, built directly or through
``construct``."""

import os
from pathlib import Path

import pytest

from corral.adapters import BUILTIN_ADAPTERS
from corral.adapters._options import LaunchOptions
from corral.adapters.base import BaseAdapter, accepts, construct, supported_options
from corral.errors import ConfigError, UnsupportedOperation
from corral.registry import Registry

IDS = sorted(BUILTIN_ADAPTERS)


def adapter_class(adapter_id: str) -> type[BaseAdapter]:
    return Registry(entry_points=None, use_env=False, use_dropins=False).resolve(adapter_id)


@pytest.mark.parametrize("adapter_id", IDS)
def test_a_relative_cwd_becomes_the_same_absolute_path_in_every_driver(
    adapter_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path)
    adapter = adapter_class(adapter_id)(cwd="project", binary="/bin/true", env={"A": "1"})
    assert adapter.cwd == os.path.join(str(tmp_path), "project")
    assert adapter.options.cwd == adapter.cwd
    assert adapter.binary == "/bin/true"
    assert adapter.env["A"] == "1"
    assert isinstance(adapter.options, LaunchOptions)


@pytest.mark.parametrize("adapter_id", IDS)
def test_no_cwd_is_the_current_directory(
    adapter_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert adapter_class(adapter_id)(binary="/bin/true").cwd == str(tmp_path)


@pytest.mark.parametrize("adapter_id", IDS)
def test_a_missing_cwd_is_refused_before_anything_runs(adapter_id: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        adapter_class(adapter_id)(cwd=str(tmp_path / "absent"), binary="/bin/true")


@pytest.mark.parametrize("adapter_id", IDS)
def test_built_directly_an_unsupported_option_is_refused_by_name_as_construct_does(
    adapter_id: str, tmp_path: Path
) -> None:
    cls = adapter_class(adapter_id)
    values = {"effort": "high", "vendor_permission_mode": "default"}
    for option, value in values.items():
        arg = "permission_mode" if option == "vendor_permission_mode" else option
        if option in supported_options(cls):
            continue
        with pytest.raises(UnsupportedOperation, match=repr(option)):
            cls(cwd=str(tmp_path), binary="/bin/true", **{arg: value})
        with pytest.raises(UnsupportedOperation, match=repr(option)):
            construct(cls, LaunchOptions.create(cwd=tmp_path, **{option: value}))


@pytest.mark.parametrize("adapter_id", IDS)
def test_an_unknown_init_argument_is_a_type_error(adapter_id: str, tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="no_such_option"):
        adapter_class(adapter_id)(cwd=str(tmp_path), no_such_option=1)  # type: ignore[call-arg]


def test_construct_hands_the_rendered_options_to_the_driver(tmp_path: Path) -> None:
    cls = adapter_class("claude-code")
    options = LaunchOptions.create(cwd=tmp_path, model="m", extra_args=["--x"], intent="ask")
    adapter = construct(cls, options)
    assert adapter.launch_options is options
    assert adapter.options.cwd == str(tmp_path)
    assert adapter.options.model == "m"
    # The intent's rendering arrives in the driver's options, after the caller's extra args.
    assert adapter.extra_args[0] == "--x"
    assert len(adapter.extra_args) > 1
    assert adapter.permission_mode is not None


def test_accepts_reads_supported_options_for_standard_names_and_the_signature_for_the_rest() -> (
    None
):
    codex, pi, claude = (adapter_class(i) for i in ("codex", "pi", "claude-code"))
    assert accepts(codex, "sandbox") and not accepts(codex, "base_env")
    assert accepts(pi, "base_env") and not accepts(pi, "permission_mode")
    assert accepts(claude, "permission_mode") and accepts(claude, "effort")
    assert not accepts(claude, "no_such_option")
