"""The root command group, lazy: it knows every command's name and one-line help as data.

Printing ``corral --help`` or ``--version`` imports no command module; running ``corral X`` imports
X's module only. ``COMMANDS`` must say what the modules really declare: a unit test loads every
module and compares (tests/unit/cli/test_lazy_commands.py), so the table cannot drift.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Any

import typer
from typer import _click
from typer.core import TyperCommand, TyperGroup

from ._coerce import install, plain_coercion


@dataclass(frozen=True)
class CommandSpec:
    """One root command: its module under ``corral.cli`` and the first paragraph of its help."""

    name: str
    module: str
    help: str


# In the order ``--help`` lists them (Typer lists plain commands before groups).
COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec(
        "serve",
        "serve",
        "Run the local corral service (API and app) on an embedded SQLite database.",
    ),
    CommandSpec(
        "record",
        "record",
        "Run SCENARIO on the real AGENT CLI against the scripted model and store its protocol"
        " lines.",
    ),
    CommandSpec(
        "conformance",
        "conformance",
        "Run conformance scenarios and print the capability matrix.",
    ),
    CommandSpec("run", "run", "Send one prompt to an agent and stream its normalized events."),
    CommandSpec("chat", "chat", "Chat with an agent in the terminal on a persistent session."),
    CommandSpec(
        "attach",
        "attach",
        "Open OpenCode's TUI on a running corral session (watch, or take over).",
    ),
    CommandSpec(
        "launch", "launch", "Launch a harness against any provider; the proxy only when needed."
    ),
    CommandSpec(
        "wire", "wire", "Make an agent's interactive sessions in PROJECT report live to the board."
    ),
    CommandSpec(
        "unwire",
        "wire",
        "Take live-session reporting out of PROJECT, restoring its files exactly.",
    ),
    CommandSpec("schema", "schema", "Print corral's JSON Schemas."),
    CommandSpec("adapters", "adapters", "Adapters: the registry of agent CLIs corral can drive."),
    CommandSpec("agents", "agents", "Install and list the pinned agent CLIs."),
    CommandSpec(
        "fake-model", "fake_model", "The scripted fake model server used to test real CLIs."
    ),
    CommandSpec("sessions", "sessions", "Persistent agent sessions and their prompt queue."),
    CommandSpec(
        "proxy",
        "proxy",
        "The translating model proxy: any harness's wire API in front of any provider.",
    ),
    CommandSpec("job", "job", "Headless jobs: seed 002's run contract."),
)


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
