"""The ``corral`` command line.

Noun groups with verb subcommands (``corral adapters list``). Each group lives in its own module of
this package exposing ``app`` (a Typer group) or ``register(root)``. The root group is lazy
(``_lazy.COMMANDS`` holds every command's name and one-line help as data): ``corral --help`` and
``--version`` import no command module, and ``corral X`` imports only X's.
``corral launch`` and ``corral run`` with a plain command line, ``corral --version`` and ``corral
--help`` skip Typer altogether (``_launch_fast``, ``_run_fast``, ``_root_help``).

Exit codes: 0 success · 1 failure (a run or check that did not pass) · 2 bad usage or input ·
3 invalid manifest · 4 unknown adapter or session · 130 interrupted.
"""

from __future__ import annotations

import sys

from .._version import __version__

TYPE_CHECKING = False  # ``typing`` itself costs corral launch's start-up (decision 036)

if TYPE_CHECKING:
    from typing import NoReturn

    import typer


def _version_callback(value: bool) -> None:
    import typer

    if value:
        typer.echo(f"corral {__version__}")
        raise typer.Exit()


def build_app() -> typer.Typer:
    import typer

    from ._lazy import LazyGroup
    from ._root_help import SUMMARY, VERSION_HELP

    app = typer.Typer(
        name="corral",
        cls=LazyGroup,
        # The root help renders as plain text: rich's help renderer alone (rich, markdown-it,
        # pygments) costs more than the whole 80 ms start-up budget. Subcommands keep rich help.
        rich_markup_mode=None,
        help=SUMMARY,
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
            help=VERSION_HELP,
        ),
    ) -> None:
        """corral: one interface for every coding-agent CLI."""

    return app


def _exit_now(rc: int) -> NoReturn:
    """Exit once the work is done, without the interpreter's teardown.

    After ``corral run`` the agent has exited and every event is written; what is left is
    finalization (clearing a few hundred modules, the last garbage collections: 50–110 ms at a
    load of 6, issue 20), which nobody waits for. The exit hooks still run (``atexit``: the
    transports' last-resort kill, logging's flush), then the buffers are flushed.
    """
    import atexit
    import os

    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: nothing more can reach the reader
        rc = rc or 1
    os._exit(rc)


def main() -> None:
    args = sys.argv[1:]
    # ``--version`` and ``--help`` print from data, without building the Typer app (start-up goal).
    if args == ["--version"]:
        print(f"corral {__version__}")
        sys.exit(0)
    if args == ["--help"]:
        from ._root_help import root_help

        sys.stdout.write(root_help())
        sys.exit(0)
    if args[:1] == ["launch"]:
        # The launcher's lean entry: a plain command line runs without building the Typer app
        # (benchmark P3); anything else (help, a usage error) falls through to Typer.
        from ._launch_fast import main as launch_main

        rc = launch_main(args[1:])
        if rc is not None:
            sys.exit(rc)
    if args[:1] == ["run"]:
        # The same for a plain ``corral run`` (issue 20: ≤ 50 ms over the bare CLI).
        from ._run_fast import main as run_main

        rc = run_main(args[1:])
        if rc is not None:
            _exit_now(rc)
    from ._guard import run_guarded

    sys.exit(run_guarded(build_app()))
