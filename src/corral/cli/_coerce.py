"""Plain ``str``/``int``/``float``/``bool`` parameters coerced without pydantic.

typer 0.29 coerces every non-bool parameter value through a pydantic ``TypeAdapter``, so any
command run with a ``str`` or ``int`` option imported pydantic (~0.1 s of start-up). The values of
plain options need no schema: a ``str`` stays itself, an ``int``/``float`` is parsed, and a bad
value is the usual usage error (exit 2) naming the parameter. Anything else (paths, lists, choices,
ranges, custom parsers, or a value that is not a string) keeps typer's own coercion, built on first
use exactly as typer would. ``plain_coercion(command)`` installs this on a command tree; it does
nothing when typer's coercion layer is not the one it knows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from typer import _click
from typer._click.exceptions import BadParameter

try:  # typer's private coercion layer (0.29); without it, typer's own coercion stays in place
    from typer._coercion import RuntimeParam, build_runtime_param
except ImportError:  # pragma: no cover - other typer versions
    RuntimeParam = None  # type: ignore[assignment,misc]

_NAMES = {int: "integer", float: "float"}


def _plain(param: Any) -> bool:
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None or not hasattr(param, "_runtime_param"):
        return False
    info = descriptor.parameter_info
    return (
        descriptor.annotation in (str, int, float, bool)
        and not descriptor.is_file
        and not descriptor.is_path
        and not descriptor.is_choice
        and info.min is None
        and info.max is None
        and info.parser is None
        and getattr(info, "click_type", None) is None
        and not param.multiple
        and param.nargs == 1
    )


if RuntimeParam is not None:

    @dataclass(frozen=True)
    class _PlainRuntimeParam(RuntimeParam):
        """Coerce a plain ``str``/``int``/``float`` value; defer anything else to typer."""

        def _coerce_value(self, value: Any, param: Any, ctx: _click.Context) -> Any:
            kind = self.annotation
            if type(value) is kind:
                return value
            if isinstance(value, str) and kind in _NAMES:
                try:
                    return kind(value)
                except ValueError:
                    raise BadParameter(
                        f"{value!r} is not a valid {_NAMES[kind]}.", ctx=ctx, param=param
                    ) from None
            typer_own = build_runtime_param(param.type_descriptor)
            return typer_own.coerce(value, param=param, ctx=ctx)


def install(params: list[Any]) -> None:
    """Give each plain parameter of ``params`` the light coercion (once; idempotent)."""
    if RuntimeParam is None:  # pragma: no cover - other typer versions
        return
    for param in params:
        if _plain(param) and param._runtime_param is None:
            descriptor = param.type_descriptor
            param._runtime_param = _PlainRuntimeParam(
                parameter_info=descriptor.parameter_info, annotation=descriptor.annotation
            )


def plain_coercion(command: _click.Command) -> _click.Command:
    """Give every plain parameter of ``command`` and its subcommands the light coercion.

    The ``--help`` option is made (and cached) on first use by click: it is made here, with the
    command's own context settings, so that it is covered too.
    """
    ctx = command.context_class(command, info_name=command.name, **command.context_settings)
    install(command.get_params(ctx))
    for sub in getattr(command, "commands", {}).values():
        plain_coercion(sub)
    return command
