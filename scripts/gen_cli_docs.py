"""Write docs/cli.md from the ``--help`` of every ``corral`` command (``--check``: fail if stale)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

# Plain click help (no rich boxes), read before typer is imported.
os.environ["TYPER_USE_RICH"] = "0"

import typer

from corral.cli import build_app
from corral.cli._lazy import LazyGroup

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def _walk(cmd: Any, path: list[str]) -> list[tuple[list[str], Any]]:
    out = [(path, cmd)]
    if hasattr(cmd, "list_commands"):
        ctx = cmd.context_class(cmd, info_name=path[-1])
        for name in sorted(cmd.list_commands(ctx)):
            # The lazy root group lists stand-ins; document the real commands behind them.
            sub = cmd.load(name) if isinstance(cmd, LazyGroup) else cmd.get_command(ctx, name)
            if sub is not None and not getattr(sub, "hidden", False):
                out += _walk(sub, [*path, name])
    return out


def render() -> str:
    root = typer.main.get_command(build_app())
    parts = [
        "# CLI reference",
        "",
        "Generated from `--help` by `python scripts/gen_cli_docs.py`; a test keeps it current.",
        "",
    ]
    for path, cmd in _walk(root, ["corral"]):
        ctx = type(root.context_class(root))(cmd, info_name=" ".join(path), terminal_width=100)
        parts += [f"## `{' '.join(path)}`", "", "```text", cmd.get_help(ctx).rstrip(), "```", ""]
    return "\n".join(parts)


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if not DOC.is_file() or DOC.read_text() != text:
            print("docs/cli.md is stale: run python scripts/gen_cli_docs.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text)
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
