"""``corral fake-model``: run the scripted fake model server as a process.

``corral fake-model serve`` prints its base URL (``http://127.0.0.1:PORT``) as the first stdout line,
then serves until SIGTERM or SIGINT (exit 0).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ._common import JSON_OPTION, print_json

app = typer.Typer(
    name="fake-model",
    help="The scripted fake model server used to test real CLIs.",
    no_args_is_help=True,
)


@app.command("serve")
def serve(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1; 0 picks a free port.")] = 0,
    scenario: Annotated[
        str | None, typer.Option(help="Scenario file (YAML/JSON) or built-in scenario name.")
    ] = None,
    log: Annotated[
        Path | None, typer.Option(help="Append every request to this JSONL file.")
    ] = None,
) -> None:
    """Serve until SIGTERM/SIGINT; the first stdout line is the base URL."""
    from ..testing.fake_model import FakeModelServer

    server = FakeModelServer(scenario, port=port, log_path=log)

    def ready(base_url: str) -> None:
        sys.stdout.write(base_url + "\n")
        sys.stdout.flush()

    server.serve_forever(on_ready=ready)


@app.command("scenarios")
def scenarios(json_output: bool = JSON_OPTION) -> None:
    """List the built-in scenarios."""
    from ..testing.fake_model import builtin_scenarios, load_scenario

    rows = [{"name": n, "description": load_scenario(n).description} for n in builtin_scenarios()]
    if json_output:
        print_json(rows)
        return
    for row in rows:
        typer.echo(f"{row['name']:<12} {row['description']}")


@app.command("schema")
def schema() -> None:
    """Print the JSON Schema of the scenario format."""
    from ..testing.fake_model import scenario_json_schema

    print_json(scenario_json_schema())
