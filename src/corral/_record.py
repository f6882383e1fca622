"""``@dataclass`` for the value classes on ``corral launch``'s path, without ``dataclasses``.

Importing ``dataclasses`` (with ``inspect``, ``ast``, ``dis``, ``tokenize``) and decorating the
launch path's ten classes — each decoration compiles generated methods — was the largest share of
the launcher's start-up left after decision 036 (decision 038). :func:`dataclass` here makes the
same classes for the subset those modules use: fields from the class's own annotations, in order;
defaults, ``field(default_factory=…)``; ``frozen``; ``kw_only``. It gives ``__init__``
(positional and keyword, the same ``TypeError`` for a missing, doubled or unknown argument),
``__repr__``, ``__eq__``, ``__hash__`` (frozen: by value; else unhashable, as ``dataclasses``
does), ``__match_args__``; its methods are shared functions, so nothing is compiled per class.

``dataclasses.replace``, ``fields``, ``asdict`` and ``is_dataclass`` still work on these
classes: ``__dataclass_fields__`` is built on first use, by ``dataclasses.make_dataclass`` from the
same fields (so ``dataclasses`` loads only then). For type checkers the names *are*
``dataclasses.dataclass`` and ``dataclasses.field``, so mypy checks every constructor call as
before. ``tests/unit/test_record.py`` holds each class to what ``dataclasses`` makes of it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # ``typing`` itself costs corral launch's start-up (decision 036)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_MISSING: Any = object()


class FrozenInstanceError(AttributeError):
    """Assigning to a field of a frozen instance (``dataclasses.FrozenInstanceError``'s role)."""


class _Factory:
    __slots__ = ("factory",)

    def __init__(self, factory: Callable[[], Any]) -> None:
        self.factory = factory


def lean_field(*, default_factory: Callable[[], Any]) -> Any:
    """A field whose default is made per instance (``field(default_factory=…)``)."""
    return _Factory(default_factory)


def field_names(cls: type) -> tuple[str, ...]:
    """The fields of a :func:`dataclass` class, in order (without loading ``dataclasses``)."""
    names: tuple[str, ...] = cls.__dict__["__record_fields__"]
    return names


def lean_replace(obj: Any, /, **changes: Any) -> Any:
    """``dataclasses.replace`` for a :func:`dataclass` instance."""
    return type(obj)(**{n: getattr(obj, n) for n in field_names(type(obj))} | changes)


class _DataclassFields:
    """``__dataclass_fields__``, made by ``dataclasses`` the first time something asks."""

    def __init__(self) -> None:
        self.fields: dict[str, Any] | None = None

    def __get__(self, obj: object, owner: type) -> dict[str, Any]:
        if self.fields is None:
            import dataclasses

            spec: list[Any] = []
            annotations = owner.__dict__.get("__annotations__", {})  # noqa: RUF063 (no inspect)
            for name in owner.__dict__["__record_fields__"]:
                default = owner.__dict__["__record_defaults__"].get(name, _MISSING)
                kind = annotations[name]
                if isinstance(default, _Factory):
                    spec.append((name, kind, dataclasses.field(default_factory=default.factory)))
                elif default is _MISSING:
                    spec.append((name, kind))
                else:
                    spec.append((name, kind, dataclasses.field(default=default)))
            params = owner.__dict__["__record_params__"]
            shadow = dataclasses.make_dataclass(owner.__name__, spec, **params)
            self.fields = {f.name: f for f in dataclasses.fields(shadow)}
        return self.fields


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    cls = type(self)
    names: tuple[str, ...] = cls.__record_fields__
    if args:
        if cls.__record_params__["kw_only"] or len(args) > len(names):
            given = len(args) + 1
            raise TypeError(
                f"{cls.__qualname__}.__init__() takes "
                f"{1 if cls.__record_params__['kw_only'] else len(names) + 1} positional "
                f"arguments but {given} were given"
            )
        for name, value in zip(names, args, strict=False):
            if name in kwargs:
                raise TypeError(
                    f"{cls.__qualname__}.__init__() got multiple values for argument {name!r}"
                )
            kwargs[name] = value
    unknown = [k for k in kwargs if k not in names]
    if unknown:
        raise TypeError(
            f"{cls.__qualname__}.__init__() got an unexpected keyword argument {unknown[0]!r}"
        )
    values = {}
    defaults = cls.__record_defaults__
    for name in names:
        if name in kwargs:
            values[name] = kwargs[name]
            continue
        default = defaults.get(name, _MISSING)
        if default is _MISSING:
            missing = [n for n in names if n not in kwargs and n not in defaults]
            listed = ", ".join(repr(n) for n in missing)
            raise TypeError(
                f"{cls.__qualname__}.__init__() missing {len(missing)} required "
                f"argument{'s' if len(missing) > 1 else ''}: {listed}"
            )
        values[name] = default.factory() if isinstance(default, _Factory) else default
    self.__dict__.update(values)


def _values(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, n) for n in type(self).__record_fields__)


def _repr(self: Any) -> str:
    shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in type(self).__record_fields__)
    return f"{type(self).__qualname__}({shown})"


def _eq(self: Any, other: object) -> Any:
    if other.__class__ is self.__class__:
        return _values(self) == _values(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(_values(self))


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _build(cls: type, frozen: bool, kw_only: bool) -> type:
    if any("__record_fields__" in base.__dict__ for base in cls.__mro__[1:]):
        raise TypeError(f"{cls.__qualname__}: inheriting a record is not supported")
    annotations = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 (no inspect)
    names = tuple(
        n for n, t in annotations.items() if not str(t).startswith(("ClassVar", "typing.ClassVar"))
    )
    defaults: dict[str, Any] = {}
    for name in names:
        value = cls.__dict__.get(name, _MISSING)
        if value is _MISSING:
            if defaults and not kw_only:
                raise TypeError(f"non-default argument {name!r} follows default argument")
            continue
        defaults[name] = value
        if isinstance(value, _Factory):
            delattr(cls, name)
    attrs: dict[str, Any] = {
        "__record_fields__": names,
        "__record_defaults__": defaults,
        "__record_params__": {"frozen": frozen, "kw_only": kw_only},
        "__dataclass_fields__": _DataclassFields(),
        "__init__": _init,
        "__repr__": _repr,
        "__eq__": _eq,
        "__hash__": _hash if frozen else None,
    }
    attrs["__match_args__"] = () if kw_only else names
    if frozen:
        attrs["__setattr__"] = _frozen_setattr
        attrs["__delattr__"] = _frozen_delattr
    for name, value in attrs.items():
        if name in ("__repr__", "__hash__") and name in cls.__dict__:
            continue  # the class's own wins, as with dataclasses
        setattr(cls, name, value)
    return cls


def lean_dataclass(
    cls: type | None = None, /, *, frozen: bool = False, kw_only: bool = False
) -> Any:
    """The decorator (see the module docstring)."""

    def wrap(target: type) -> type:
        return _build(target, frozen, kw_only)

    return wrap if cls is None else wrap(cls)


if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass
    from dataclasses import field as field
    from dataclasses import replace as replace
else:
    dataclass = lean_dataclass
    field = lean_field
    replace = lean_replace
