"""Helpers every command group shares: JSON output, the error → exit-code mapping."""

from __future__ import annotations

import json
import sys
from typing import Any

import msgspec
import typer
from rich.console import Console

from ._guard import run_guarded

console = Console()
err_console = Console(stderr=True)

__all__ = ["JSON_OPTION", "console", "err_console", "print_json", "run_guarded"]

JSON_OPTION = typer.Option(False, "--json", help="Print machine-readable JSON instead of a table.")


def print_json(value: Any) -> None:
    """Write ``value`` as JSON on stdout (msgspec structs and pydantic models included)."""
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    sys.stdout.write(json.dumps(msgspec.json.decode(msgspec.json.encode(value)), indent=2) + "\n")
