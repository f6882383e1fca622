"""``corral schema events|manifest`` — the published JSON Schemas."""

from __future__ import annotations

import typer

from ..events import events_schema
from ._common import print_json

app = typer.Typer(name="schema", help="Print corral's JSON Schemas.", no_args_is_help=True)


@app.command("events")
def events() -> None:
    """JSON Schema of the event envelope and every normalized event."""
    print_json(events_schema())


@app.command("manifest")
def manifest() -> None:
    """JSON Schema of an adapter manifest."""
    from ..manifests import manifest_schema

    print_json(manifest_schema())
