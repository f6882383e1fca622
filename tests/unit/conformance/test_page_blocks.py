"""The compatibility page keeps blocks other generators wrote (the overhead figures)."""

from __future__ import annotations

from corral.testing.conformance import compatibility_markdown
from corral.testing.conformance._report import blocks, splice_block
from corral.testing.conformance._types import Outcome, ScenarioResult


def _results() -> list[ScenarioResult]:
    return [
        ScenarioResult(agent="a", scenario="text", outcome=Outcome.PASS, seconds=0.1),
        ScenarioResult(
            agent="a", scenario="question", outcome=Outcome.UNSUPPORTED, seconds=0.0, reason="no"
        ),
    ]


def test_splice_adds_before_the_notes_then_replaces_in_place() -> None:
    page = compatibility_markdown(_results())
    once = splice_block(page, "overhead", "## Overhead\n\n| x |")
    assert once.index("<!-- overhead:begin -->") < once.index("## Notes")
    twice = splice_block(once, "overhead", "## Overhead\n\n| y |")
    assert "| x |" not in twice and "| y |" in twice
    assert twice.count("<!-- overhead:begin -->") == 1
    assert twice.replace("| y |", "| x |") == once


def test_regenerating_the_matrix_keeps_the_block() -> None:
    page = splice_block(compatibility_markdown(_results()), "overhead", "## Overhead\n\nfigures")
    again = compatibility_markdown(_results(), keep_from=page)
    assert (
        blocks(again)
        == blocks(page)
        == ["<!-- overhead:begin -->\n## Overhead\n\nfigures\n<!-- overhead:end -->\n"]
    )
    assert again == page


def test_a_page_without_notes_gets_the_block_at_the_end() -> None:
    assert splice_block("# C\n", "overhead", "b").endswith("<!-- overhead:end -->\n")
