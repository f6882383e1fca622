"""docs/launch.md shows the tables as they are (the matrix is generated from them)."""

from __future__ import annotations

from pathlib import Path

from corral.launch import CATALOG
from corral.launch._matrix import matrix_markdown, providers_markdown, transports_markdown

DOC = Path(__file__).parents[3] / "docs" / "launch.md"


def test_tables_in_the_doc_are_current() -> None:
    text = DOC.read_text()
    for table in (matrix_markdown(), providers_markdown(), transports_markdown()):
        assert table in text, "regenerate the tables in docs/launch.md"


def test_every_catalog_code_is_documented_with_its_exit_code() -> None:
    text = DOC.read_text()
    for code, (exit_code, template) in CATALOG.items():
        assert f"| `{code}` | {exit_code} | `{template}` |" in text
