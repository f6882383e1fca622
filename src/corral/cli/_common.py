"""Helpers every command group shares: JSON output, the error → exit-code mapping."""

from __future__ import annotations

import json
import sys
from typing import Any

import msgspec
import typer
from rich.console import Console
from rich.markup import escape

from .._redact import redact
from ..errors import CorralError

console = Console()
err_console = Console(stderr=True)

JSON_OPTION = typer.Option(False, "--json", help="Print machine-readable JSON instead of a table.")


def print_json(value: Any) -> None:
    """Write ``value`` as JSON on stdout (msgspec structs and pydantic models included)."""
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    sys.stdout.write(json.dumps(msgspec.json.decode(msgspec.json.encode(value)), indent=2) + "\n")


def run_guarded(app: typer.Typer) -> int:
    """Run the Typer app, turning corral errors into a message and their exit code."""
    try:
        # With standalone_mode=False click *returns* the code of a typer.Exit instead of raising.
        rc = app(standalone_mode=False)
    except CorralError as exc:
        err_console.print(f"[bold red]error:[/] {escape(redact(str(exc)))}", highlight=False)
        return exc.exit_code
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        err_console.print("aborted")
        return 130
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        import click

        # typer >= 0.29 raises its own vendored click's exceptions (typer.TyperException), not
        # click's: both kinds are usage errors with a message and an exit code, never a traceback.
        if isinstance(exc, click.ClickException | typer.TyperException) and hasattr(exc, "show"):
            exc.show()
            return int(getattr(exc, "exit_code", 2))
        raise
    return rc if isinstance(rc, int) else 0
