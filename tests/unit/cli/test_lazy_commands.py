"""The lazy root group's table (``corral.cli._lazy.COMMANDS``) says what the modules declare.

``corral --help`` prints the table's names and one-line helps without importing any command
module, so the table must equal what the modules really register: same names, same modules, same
help as the real commands.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest
import typer

import corral.cli
from corral.cli import build_app
from corral.cli._lazy import COMMANDS, LazyGroup, load_command


def _command_modules() -> list[str]:
    """Every public module of corral.cli that declares commands (``app`` or ``register``)."""
    names = []
    for info in pkgutil.iter_modules(corral.cli.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"corral.cli.{info.name}")
        if hasattr(module, "app") or hasattr(module, "register"):
            names.append(info.name)
    return names


def _eager_root() -> typer.core.TyperGroup:
    """A root group built eagerly: every command module of the package registered."""
    root = typer.Typer(add_completion=False)
    for name in _command_modules():
        module = importlib.import_module(f"corral.cli.{name}")
        if hasattr(module, "register"):
            module.register(root)
        else:
            root.add_typer(module.app)
    group = typer.main.get_group(root)
    assert isinstance(group, typer.core.TyperGroup)
    return group


def test_table_lists_exactly_the_declared_commands() -> None:
    eager = _eager_root()
    names = [spec.name for spec in COMMANDS]
    assert len(set(names)) == len(names)
    assert sorted(names) == sorted(eager.list_commands(eager.context_class(eager)))


def test_table_names_each_command_s_own_module() -> None:
    for spec in COMMANDS:
        scratch = typer.Typer(add_completion=False)
        module = importlib.import_module(f"corral.cli.{spec.module}")
        if hasattr(module, "register"):
            module.register(scratch)
        else:
            scratch.add_typer(module.app)
        assert spec.name in typer.main.get_group(scratch).commands, spec


@pytest.mark.parametrize("spec", COMMANDS, ids=lambda spec: spec.name)
def test_table_help_is_the_real_commands_first_paragraph(spec: object) -> None:
    from corral.cli._lazy import CommandSpec

    assert isinstance(spec, CommandSpec)
    real = load_command(spec)
    assert not real.hidden and not real.deprecated and real.short_help is None
    assert (real.help or "").split("\n\n")[0] == spec.help
    root = typer.main.get_command(build_app())
    assert isinstance(root, LazyGroup)
    stand_in = root.get_command(root.context_class(root), spec.name)
    assert stand_in is not None
    for limit in (20, 45, 80, 200):
        assert stand_in.get_short_help_str(limit) == real.get_short_help_str(limit)


def test_running_a_command_loads_the_real_one() -> None:
    root = typer.main.get_command(build_app())
    assert isinstance(root, LazyGroup)
    ctx = root.context_class(root)
    name, command, rest = root.resolve_command(ctx, ["schema", "events"])
    assert name == "schema" and rest == ["events"]
    assert command is not None and "events" in getattr(command, "commands", {})
    assert root.get_command(ctx, "schema") is command  # loaded once, then reused


def test_unknown_command_suggests_a_close_name() -> None:
    root = typer.main.get_command(build_app())
    assert isinstance(root, LazyGroup)
    with pytest.raises(Exception, match="Did you mean 'serve'"):
        root.resolve_command(root.context_class(root), ["servee"])
