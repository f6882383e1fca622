"""``corral._record.dataclass`` makes what ``dataclasses.dataclass`` makes, for the launch path's
classes (decision 038): the same class declared both ways, side by side."""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any

import pytest

from corral import _record
from corral.agents._layout import Marker
from corral.agents._pins import Pin
from corral.launch._env import Endpoint, HarnessLaunch, ProxyConfig
from corral.launch._options import LaunchOptions
from corral.launch._plan import Plan
from corral.launch._resolve import Resolution
from corral.launch._tables import Harness, Provider

LAUNCH_PATH = (LaunchOptions, Provider, Harness, Resolution, Endpoint, HarnessLaunch, ProxyConfig)
LAUNCH_PATH += (Plan, Pin, Marker)


def declare(decorator: Any, field: Any, **params: Any) -> type:
    @decorator(**params)
    class Sample:
        a: int
        b: str = "x"
        """an attribute docstring, as the launch tables have"""
        c: dict[str, int] = field(default_factory=dict)

        @property
        def twice(self) -> int:
            return 2 * self.a

    return Sample


PARAMS = [{}, {"frozen": True}, {"kw_only": True}, {"frozen": True, "kw_only": True}]
CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((1,), {}),
    ((1, "y"), {}),
    ((1, "y", {"k": 1}), {}),
    ((), {"a": 1}),
    ((), {"a": 1, "c": {"k": 2}}),
    ((1,), {"b": "z"}),
    ((), {}),  # missing a
    ((1, "y", {}, 4), {}),  # too many
    ((1,), {"a": 2}),  # a twice
    ((), {"a": 1, "d": 0}),  # unknown
]


def both(params: dict[str, Any]) -> tuple[type, type]:
    return (
        declare(dataclasses.dataclass, dataclasses.field, **params),
        declare(_record.lean_dataclass, _record.lean_field, **params),
    )


def outcome(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    try:
        obj = cls(*args, **dict(kwargs))
    except TypeError:
        return TypeError
    return (repr(obj), obj.a, obj.b, obj.c, obj.twice)


@pytest.mark.parametrize("params", PARAMS, ids=str)
@pytest.mark.parametrize(("args", "kwargs"), CALLS)
def test_construction_is_the_same(
    params: dict[str, Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    real, lean = both(params)
    assert outcome(lean, args, kwargs) == outcome(real, args, kwargs)


@pytest.mark.parametrize("params", PARAMS, ids=str)
def test_equality_hashing_and_freezing_are_the_same(params: dict[str, Any]) -> None:
    for cls in both(params):
        one, same, other = cls(a=1), cls(a=1), cls(a=2)
        assert one == same and one != other and one != (1, "x", {})
        assert one.c is not same.c  # a fresh default per instance
        if params.get("frozen"):
            with pytest.raises(AttributeError):
                one.a = 3
            with pytest.raises(TypeError):  # a dict field: unhashable, as with dataclasses
                hash(one)
            assert hash(cls(a=1, c=None)) == hash(cls(a=1, c=None))  # type: ignore[arg-type]
        else:
            one.a = 3
            assert one.a == 3
            assert cls.__hash__ is None
        assert cls.__match_args__ == (() if params.get("kw_only") else ("a", "b", "c"))


@pytest.mark.parametrize("params", PARAMS, ids=str)
def test_the_dataclasses_functions_work_on_it(params: dict[str, Any]) -> None:
    real, lean = both(params)
    assert dataclasses.is_dataclass(lean)
    names = [(f.name, f.default, f.default_factory) for f in dataclasses.fields(lean)]
    assert names == [(f.name, f.default, f.default_factory) for f in dataclasses.fields(real)]
    obj = lean(a=1, c={"k": 1})
    assert dataclasses.asdict(obj) == {"a": 1, "b": "x", "c": {"k": 1}}
    assert dataclasses.replace(obj, b="q") == lean(a=1, b="q", c={"k": 1})
    assert _record.lean_replace(obj, b="q") == lean(a=1, b="q", c={"k": 1})


def test_a_required_field_after_a_default_is_refused_unless_kw_only() -> None:
    with pytest.raises(TypeError, match="non-default argument 'b'"):

        @_record.lean_dataclass
        class Bad:
            a: int = 0
            b: int

    @_record.lean_dataclass(kw_only=True)
    class Fine:
        a: int = 0
        b: int

    assert Fine(b=1) == Fine(a=0, b=1)


@pytest.mark.parametrize("cls", LAUNCH_PATH, ids=lambda c: c.__qualname__)
def test_the_launch_path_classes_are_lean_records(cls: type) -> None:
    assert "__record_fields__" in cls.__dict__  # not decorated by dataclasses
    assert _record.field_names(cls) == tuple(f.name for f in dataclasses.fields(cls))


def test_a_launch_record_round_trips() -> None:
    opts = LaunchOptions("codex", "bedrock", model="m", harness_args=("--x",))
    assert pickle.loads(pickle.dumps(opts)) == opts
    assert dataclasses.replace(opts, model="n").model == "n"
    assert repr(opts).startswith("LaunchOptions(harness='codex', provider='bedrock', model='m'")
    assert opts.interactive
