"""``corral run``'s lean entry: a plain command line is parsed and run without Typer.

Building the Typer app and running Typer's parameter coercion (typer 0.29 validates every
parameter with a pydantic ``TypeAdapter``) costs more than the 50 ms ``corral run`` may add over
the bare CLI (issue 20). :func:`main` parses a plain command line from :data:`OPTIONS` and calls
:func:`._run_main.run_command`; anything unusual (``--help``, an unknown or clustered option, a
missing or bad value, ``--``, a wrong number of positionals) is ``None`` and the caller hands the
whole command line to the Typer command (``cli/run.py``), which reports it as usual.
``tests/unit/cli/test_run_fast.py`` compares :data:`OPTIONS` with the Typer command's parameters.
Before it imports the driver it may start the agent (``cli/_run_early.py``, decision 044).
"""

from __future__ import annotations

from ._plain_args import parse, table, to_paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._plain_args import Option

OPTIONS: tuple[Option, ...] = (
    ("model", "str", ("--model", "-m"), ()),
    ("cwd", "path", ("--cwd",), ()),
    ("resume", "str", ("--resume",), ()),
    ("image", "paths", ("--image",), ()),
    ("effort", "str", ("--effort",), ()),
    ("intent", "str", ("--intent",), ()),
    ("allowed_commands", "str", ("--allowed-commands",), ()),
    ("vendor_permission_mode", "str", ("--vendor-permission-mode",), ()),
    ("yes", "flag", ("--yes", "-y"), ()),
    ("binary", "str", ("--binary",), ()),
    ("agent_arg", "strs", ("--agent-arg",), ()),
    ("idle_timeout", "float", ("--idle-timeout",), ()),
    ("json_out", "flag", ("--json",), ()),
)

_TABLE = table(OPTIONS)


def main(args: list[str]) -> int | None:
    """``corral run ARGS`` without Typer; ``None`` when Typer must take the command line."""
    parsed = parse(args, _TABLE, (2, 2), as_paths=False)  # pathlib after the spawn
    if parsed is None:
        return None
    params, (agent, prompt) = parsed
    from ..errors import CorralError

    try:
        from ._run_early import spawn_for_run

        early = spawn_for_run(agent, prompt, params)  # before the driver's imports (decision 044)
        try:
            from ._run_main import run_command

            return run_command(agent, prompt, early=early, **to_paths(params, OPTIONS))
        finally:
            if early is not None:
                early.discard()  # a no-op once the adapter claimed it
    except KeyboardInterrupt:
        return 130
    except CorralError as exc:  # printed as the Typer path prints it (``_guard.run_guarded``)
        from rich.console import Console
        from rich.markup import escape

        from .._redact import redact

        Console(stderr=True).print(
            f"[bold red]error:[/] {escape(redact(str(exc)))}", highlight=False
        )
        return exc.exit_code
