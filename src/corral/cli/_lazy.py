"""The root command group, lazy: it knows every command's name and one-line help as data.

Printing ``corral --help`` or ``--version`` imports no command module; running ``corral X`` imports
X's module only. ``COMMANDS`` must say what the modules really declare: a unit test loads every
module and compares (tests/unit/cli/test_lazy_commands.py), so the table cannot drift.
"""

from __future__ import annotations

import importlib
from difflib import get_close_matches
from typing import Any

import typer
from typer import _click
from typer.core import TyperCommand, TyperGroup

from ._coerce import install, plain_coercion
from ._commands import COMMANDS, CommandSpec
from ._root_help import root_help


def load_command(spec: CommandSpec) -> _click.Command:
    """Import ``spec``'s module and build its real click command (a group or a single command)."""
    module = importlib.import_module(f"{__package__}.{spec.module}")
    # Registered on a scratch root exactly as an eager root would, so the command is the same.
    scratch = typer.Typer(add_completion=False)
    if hasattr(module, "register"):
        module.register(scratch)
    else:
        scratch.add_typer(module.app)
    command = typer.main.get_group(scratch).commands.get(spec.name)
    if command is None:
        raise LookupError(f"corral.cli.{spec.module} declares no command {spec.name!r}")
    return plain_coercion(command)


class LazyGroup(TyperGroup):
    """A ``TyperGroup`` whose commands are ``COMMANDS``, imported only when one runs."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self._specs = {spec.name: spec for spec in COMMANDS}
        self._loaded: dict[str, _click.Command] = {}

    def load(self, name: str) -> _click.Command | None:
        """The real command ``name`` (importing its module), or None when there is none."""
        spec = self._specs.get(name)
        if spec is None:
            return None
        if name not in self._loaded:
            self._loaded[name] = load_command(spec)
        return self._loaded[name]

    def get_params(self, ctx: _click.Context) -> list[_click.Parameter]:
        params = super().get_params(ctx)
        install(params)  # the root's own options (--version, --help), coerced without pydantic
        return params

    def list_commands(self, ctx: _click.Context) -> list[str]:
        return list(self._specs)

    def format_help(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        # The root help is corral's own rendering, the same text the lean ``corral --help`` prints.
        formatter.write(root_help())

    def get_command(self, ctx: _click.Context, cmd_name: str) -> _click.Command | None:
        # Listing (help, completion) needs only the name and one line: a stand-in carries them.
        if cmd_name in self._loaded:
            return self._loaded[cmd_name]
        spec = self._specs.get(cmd_name)
        return None if spec is None else TyperCommand(spec.name, help=spec.help)

    def resolve_command(
        self, ctx: _click.Context, args: list[str]
    ) -> tuple[str | None, _click.Command | None, list[str]]:
        command = self.load(args[0]) if args else None
        if command is not None:
            return args[0], command, args[1:]
        try:
            return self._click_resolve_command(ctx, args)
        except _click.exceptions.UsageError as exc:
            matches = get_close_matches(args[0], list(self._specs)) if args else []
            if matches:
                exc.message = (
                    f"{exc.message.rstrip('.')}. Did you mean {', '.join(map(repr, matches))}?"
                )
            raise
