"""The launch option lists are one list: ``LaunchOptions``'s fields, ``LaunchOptions.create``'s
arguments and the adapter ``__init__`` arguments (``LaunchArgs``) cannot drift apart."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import pytest

from corral.adapters import _options
from corral.adapters._options import (
    INIT_ARGUMENT,
    OPTION_NAMES,
    RENDERED_OPTIONS,
    CreateArgs,
    LaunchArgs,
    LaunchOptions,
)
from corral.adapters.base import INIT_KWARGS


def _keys(typed_dict: type) -> list[str]:
    return list(typing.get_type_hints(typed_dict))


def test_create_takes_exactly_the_fields_of_launch_options() -> None:
    fields = [f.name for f in dataclasses.fields(LaunchOptions)]
    assert sorted(_keys(CreateArgs)) == sorted(fields)
    assert list(OPTION_NAMES) == fields


def test_an_adapter_init_takes_every_option_construct_passes_on() -> None:
    passed_on = {INIT_ARGUMENT.get(n, n) for n in OPTION_NAMES if n not in RENDERED_OPTIONS}
    assert set(_keys(LaunchArgs)) == passed_on
    assert set(INIT_KWARGS) == passed_on
    assert set(INIT_ARGUMENT) <= set(OPTION_NAMES)


def test_shared_options_are_declared_once_with_one_type() -> None:
    init, create = typing.get_type_hints(LaunchArgs), typing.get_type_hints(CreateArgs)
    shared = set(init) & set(create)
    assert shared == set(_keys(_options._StandardArgs))
    assert {name: init[name] for name in shared} == {name: create[name] for name in shared}


def test_every_option_given_to_create_lands_in_its_field(tmp_path: Path) -> None:
    values = {
        "cwd": tmp_path,
        "model": "m",
        "effort": "high",
        "intent": "work",
        "allowed_commands": ["make test"],
        "binary": "/bin/true",
        "env": {"A": "1"},
        "extra_args": ["--x"],
        "resume_session_id": "r",
        "on_session_id": print,
        "vendor_permission_mode": None,  # cannot be combined with an intent
    }
    assert set(values) == set(OPTION_NAMES)
    options = LaunchOptions.create(**values)  # type: ignore[arg-type]
    assert set(options.given()) == set(OPTION_NAMES) - {"vendor_permission_mode"}
    alone = LaunchOptions.create(cwd=tmp_path, vendor_permission_mode="ask")
    assert alone.given() == ["cwd", "vendor_permission_mode"]


def test_create_refuses_a_name_that_is_not_an_option(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="permission_mode"):
        LaunchOptions.create(cwd=tmp_path, permission_mode="ask")  # type: ignore[call-arg]
