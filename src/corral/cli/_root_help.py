"""``corral --help``: the root help, rendered from data without Typer.

The lean entry (:func:`corral.cli.main`) prints it for ``corral --help``; the Typer root group
renders the same text (``LazyGroup.format_help``), so every path shows one help. Each command's
one line is shown whole, wrapped to the terminal, never cut short.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Iterable

from ._commands import COMMANDS

USAGE = "Usage: corral [OPTIONS] COMMAND [ARGS]..."
SUMMARY = "Drive every coding-agent CLI through one interface."
VERSION_HELP = "Print corral's version and exit."
OPTIONS = (("--version", VERSION_HELP), ("--help", "Show this message and exit."))
MAX_WIDTH = 80


def terminal_width() -> int:
    """``COLUMNS``, else the terminal's width, else 80; kept between 50 and 78 columns."""
    columns = 0
    raw = os.environ.get("COLUMNS", "")
    if raw.isdigit():
        columns = int(raw)
    else:
        try:
            columns = os.get_terminal_size().columns
        except OSError:
            columns = MAX_WIDTH
    return max(50, min(columns, MAX_WIDTH) - 2)


def root_help(width: int | None = None) -> str:
    width = width or terminal_width()
    lines = [USAGE, "", f"  {SUMMARY}", "", "Options:"]
    lines += _rows(OPTIONS, width)
    lines += ["", "Commands:"]
    lines += _rows(((c.name, c.help) for c in COMMANDS), width)
    return "\n".join(lines) + "\n"


def _rows(rows: Iterable[tuple[str, str]], width: int) -> list[str]:
    pairs = list(rows)
    name_width = max(len(name) for name, _ in pairs)
    indent = 2 + name_width + 2
    out: list[str] = []
    for name, text in pairs:
        first, *rest = textwrap.wrap(text, max(20, width - indent)) or [""]
        out.append(f"  {name:<{name_width}}  {first}".rstrip())
        out += [" " * indent + line for line in rest]
    return out
