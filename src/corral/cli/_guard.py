"""Run the Typer app, turning corral errors into a message and their exit code.

Kept apart from ``_common`` so that the entry point imports no console, no msgspec: those load only
when an error is printed or a command needs them.
"""

from __future__ import annotations

import typer

from ..errors import CorralError


def run_guarded(app: typer.Typer) -> int:
    """Run the Typer app, turning corral errors into a message and their exit code."""
    try:
        # With standalone_mode=False click *returns* the code of a typer.Exit instead of raising.
        rc = app(standalone_mode=False)
    except CorralError as exc:
        from rich.markup import escape

        from .._redact import redact
        from ._common import err_console

        err_console.print(f"[bold red]error:[/] {escape(redact(str(exc)))}", highlight=False)
        return exc.exit_code
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        from ._common import err_console

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
