"""The ``corral`` command line.

Noun groups with verb subcommands (``corral adapters list``). Each group lives in its own module of
this package exposing ``app`` (a Typer group) or ``register(root)``; the modules listed in
``_GROUPS`` are loaded when present, so adding a group never means editing this file twice.

Exit codes: 0 success · 1 failure (a run or check that did not pass) · 2 bad usage or input ·
3 invalid manifest · 4 unknown adapter or session · 130 interrupted.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

import typer

from .._version import __version__
from ._common import run_guarded

_GROUPS = (
    "serve",
    "schema",
    "adapters",
    "agents",
    "fake_model",
    "record",
    "conformance",
    "run",
    "sessions",
    "chat",
    "attach",
    "proxy",
    "launch",
    "wire",
    "job",
)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"corral {__version__}")
        raise typer.Exit()


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="corral",
        help="Drive every coding-agent CLI through one interface.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )

    @app.callback()
    def _root(
        version: bool = typer.Option(
            False,
            "--version",
            callback=_version_callback,
            is_eager=True,
            help="Print corral's version and exit.",
        ),
    ) -> None:
        """corral: one interface for every coding-agent CLI."""

    for name in _GROUPS:
        if importlib.util.find_spec(f"{__name__}.{name}") is None:
            continue
        module = importlib.import_module(f"{__name__}.{name}")
        if hasattr(module, "register"):
            module.register(app)
        else:
            app.add_typer(module.app)
    return app


def main() -> None:
    sys.exit(run_guarded(build_app()))
