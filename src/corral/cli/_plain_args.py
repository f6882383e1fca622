"""A plain command line parsed from a table, for the lean entries that skip Typer.

``corral launch`` and ``corral run`` sit in front of an agent's start, and building the Typer
app costs more than their whole budget (typer, its click, ``inspect``, and pydantic for Typer's
parameter coercion). Their lean entries (``_launch_fast``, ``_run_fast``) describe the command's
options as data and parse with :func:`parse`; anything unusual — ``--help``, an unknown or
clustered option, a missing or bad value, ``--``, a wrong number of positionals — is ``None``,
and the caller hands the whole command line to the Typer command, which reports it as usual. Each
entry's test compares its table with what the Typer command declares, so they cannot drift.
"""

from __future__ import annotations

TYPE_CHECKING = False  # ``typing`` itself costs corral launch's start-up (decision 036)
if TYPE_CHECKING:
    from typing import Any, Literal

    Kind = Literal["str", "int", "float", "path", "flag", "strs", "paths"]
    """``strs`` / ``paths``: a repeatable option (a list, in the order given)."""

    Option = tuple[str, Kind, tuple[str, ...], tuple[str, ...]]
    """(parameter, kind, option names, the flag's "off" names); parameter names are Typer's."""


def table(options: tuple[Option, ...]) -> dict[str, tuple[str, Kind, bool]]:
    """Option name → (parameter, kind, whether it turns a flag on)."""
    names: dict[str, tuple[str, Kind, bool]] = {}
    for param, kind, on, off in options:
        names.update({name: (param, kind, True) for name in on})
        names.update({name: (param, kind, False) for name in off})
    return names


def parse(
    args: list[str],
    names: dict[str, tuple[str, Kind, bool]],
    positionals: tuple[int, int],
    *,
    as_paths: bool = True,
) -> tuple[dict[str, Any], list[str]] | None:
    """The parameters given and the positionals, or ``None`` when Typer must parse.

    ``as_paths=False`` leaves ``path`` / ``paths`` values as strings, for a caller that has work
    to do before ``pathlib`` is worth its import (``corral run``'s early spawn); it converts them
    later with :func:`to_paths`."""
    params: dict[str, Any] = {}
    positional: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if not arg.startswith("-") or arg == "-":
            positional.append(arg)
            continue
        name, eq, value = arg.partition("=")
        if name not in names or (eq and not name.startswith("--")):
            # --help, -h, --, an unknown or clustered option, or ``-p=x`` (click reads "=x")
            return None
        param, kind, on = names[name]
        if kind == "flag":
            if eq:
                return None
            params[param] = on
            continue
        if not eq:
            if i >= len(args):
                return None
            value = args[i]
            i += 1
        try:
            keep = not as_paths and kind in ("path", "paths")
            converted = value if keep else _convert(kind, value)
        except ValueError:
            return None
        if kind in ("strs", "paths"):
            params.setdefault(param, []).append(converted)
        else:
            params[param] = converted
    low, high = positionals
    if not low <= len(positional) <= high:
        return None
    return params, positional


def to_paths(params: dict[str, Any], options: tuple[Option, ...]) -> dict[str, Any]:
    """``params`` from ``parse(..., as_paths=False)`` with its path values as ``parse`` makes them."""
    for param, kind, _on, _off in options:
        if param not in params:
            continue
        if kind == "path":
            params[param] = _convert(kind, params[param])
        elif kind == "paths":
            params[param] = [_convert(kind, value) for value in params[param]]
    return params


def _convert(kind: Kind, value: str) -> object:
    if kind == "int":
        return int(value)
    if kind == "float":
        return float(value)
    if kind in ("path", "paths"):
        from pathlib import Path

        return Path(value)
    return value
