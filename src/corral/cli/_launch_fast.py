"""``corral launch``'s lean entry: a plain command line is parsed and run without Typer.

The launcher sits in front of every harness start (benchmark P3: ≤ 50 ms added), and building
the Typer app costs more than that (typer, its click, ``inspect``…). :func:`main` parses a plain
command line from :data:`OPTIONS` and runs the launch; anything unusual — ``--help``, an unknown
or clustered option, a missing or bad value, a wrong number of positionals, a flag conflict —
returns ``None`` and the caller hands the whole command line to the Typer command
(``cli/launch.py``), which reports it as usual. ``OPTIONS`` must say what that command declares:
``tests/unit/launch/test_launch_fast.py`` compares them, so they cannot drift.

This module imports neither Typer nor rich; the launch package it loads imports no pydantic,
httpx or asyncio on a native launch (``tests/unit/test_import_weight.py``).
"""

from __future__ import annotations

import sys

from ._plain_args import parse as parse_plain
from ._plain_args import table

TYPE_CHECKING = False  # ``typing`` itself costs corral launch's start-up (decision 036)
if TYPE_CHECKING:
    from typing import Any

    from ._plain_args import Option

# (parameter, kind, option names, the flag's "off" names). Parameter names are the Typer
# command's (``json_output`` is ``LaunchOptions.json``).
OPTIONS: tuple[Option, ...] = (
    ("model", "str", ("--model", "-m"), ()),
    ("api_key", "str", ("--api-key",), ()),
    ("api_base", "str", ("--api-base",), ()),
    ("region", "str", ("--region",), ()),
    ("project", "str", ("--project",), ()),
    ("resource_group", "str", ("--resource-group",), ()),
    ("endpoint_name", "str", ("--endpoint-name",), ()),
    ("transport", "str", ("--transport", "-t"), ()),
    ("profile", "str", ("--profile",), ()),
    ("auth_command", "str", ("--auth-command",), ()),
    ("with_proxy_if_needed", "flag", ("--with-proxy-if-needed",), ("--no-with-proxy-if-needed",)),
    ("with_proxy", "flag", ("--with-proxy",), ("--no-with-proxy",)),
    ("no_proxy", "flag", ("--no-proxy",), ("--no-no-proxy",)),
    ("proxy_port", "int", ("--proxy-port",), ()),
    ("proxy_log_level", "str", ("--proxy-log-level",), ()),
    ("resume", "str", ("--resume", "-r"), ()),
    ("session_id", "str", ("--session-id", "-s"), ()),
    ("prompt", "str", ("--prompt", "-p"), ()),
    ("max_turns", "int", ("--max-turns",), ()),
    ("max_budget_usd", "float", ("--max-budget-usd",), ()),
    ("observe", "flag", ("--observe",), ("--no-observe",)),
    ("home", "path", ("--home",), ()),
    ("json_output", "flag", ("--json",), ()),
    ("debug", "flag", ("--debug", "-d"), ()),
    ("dry_run", "flag", ("--dry-run",), ("--no-dry-run",)),
)
PROXY_LEVELS = ("debug", "info", "warn", "error")

_TABLE = table(OPTIONS)


def split_harness_args(args: list[str]) -> tuple[list[str], tuple[str, ...]]:
    """Everything after the first ``--`` is the harness's (never a positional of ours)."""
    if "--" not in args:
        return args, ()
    at = args.index("--")
    return args[:at], tuple(args[at + 1 :])


def parse(args: list[str]) -> dict[str, Any] | None:
    """The launch command's parameters (Typer's names) from a plain command line (no ``--``
    part), or ``None`` when the command line needs Typer's parser or its usage error."""
    parsed = parse_plain(args, _TABLE, (1, 2))
    if parsed is None:
        return None
    params, positional = parsed
    if params.get("no_proxy") and (params.get("with_proxy") or params.get("with_proxy_if_needed")):
        return None
    if params.get("proxy_log_level", "warn") not in PROXY_LEVELS:
        return None
    params["harness"] = positional[0]
    params["provider"] = positional[1] if len(positional) == 2 else None
    return params


def run(params: dict[str, Any], harness_args: tuple[str, ...]) -> int:
    """Run the launch the parameters describe; the exit status (a catalog error is printed)."""
    from ..launch._errors import LaunchError
    from ..launch._launch import launch
    from ..launch._options import LaunchOptions

    fields = dict(params)
    json_output = bool(fields.pop("json_output", False))
    home = fields.pop("home", None)
    opts = LaunchOptions(
        **fields,
        json=json_output,
        home=home.resolve() if home is not None else None,
        harness_args=harness_args,
    )
    try:
        rc = launch(opts, replace_process=True)
    except LaunchError as exc:
        if json_output:
            import json

            sys.stderr.write(json.dumps(exc.to_json()) + "\n")
        sys.stderr.write(f"error: {exc} [{exc.code}]\n")
        return exc.exit_code
    sys.stdout.flush()
    return rc


def main(args: list[str]) -> int | None:
    """``corral launch ARGS`` without Typer; ``None`` when Typer must take the command line."""
    ours, harness_args = split_harness_args(args)
    params = parse(ours)
    if params is None:
        return None
    from ..errors import CorralError

    try:
        return run(params, harness_args)
    except KeyboardInterrupt:
        return 130
    except CorralError as exc:  # not the catalog's: printed as every corral command does
        from .._redact import redact

        sys.stderr.write(f"error: {redact(str(exc))}\n")
        return exc.exit_code
