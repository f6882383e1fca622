"""Every capability a built-in target's adapter claims is backed by a passing run on the page.

``docs/compatibility.md`` is written by ``corral conformance --write-docs`` from runs of the
pinned real CLIs. A capability with a scenario of its own in the matrix (approvals, cancel,
resume, images, input during a turn, questions) may be claimed only where that scenario's cell
says pass: a claim no run shows fails here, as does a target the page leaves out.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from corral.registry import Registry
from corral.testing.conformance._targets import SPECS

PAGE = Path(__file__).resolve().parents[3] / "docs" / "compatibility.md"

SHOWN_BY = {
    "permissions": "approval-allow",
    "cancel": "cancel-mid-turn",
    "resume": "resume-after-exit",
    "image_input": "image-input",
    "input_during_turn": "input-during-turn",
    "interact": "question",
}


def matrix() -> dict[str, dict[str, str]]:
    """``{target: {scenario: cell}}`` from the page's first table."""
    lines = [line for line in PAGE.read_text("utf-8").splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    out: dict[str, dict[str, str]] = {name: {} for name in header[1:]}
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) != len(header):
            break  # the end of the first table
        for name, cell in zip(header[1:], cells[1:], strict=True):
            out[name][cells[0]] = cell
    return out


def test_the_page_parses_into_a_matrix() -> None:
    got = matrix()
    assert "claude" in got
    assert got["claude"]["text"].startswith("✅")


@pytest.mark.parametrize("target", sorted(SPECS))
def test_claimed_capabilities_pass_on_the_page(target: str) -> None:
    column = matrix().get(target)
    assert column is not None, f"{target} is not on docs/compatibility.md: regenerate it"
    caps = Registry().resolve(SPECS[target].adapter).capabilities()
    unbacked = {
        cap: column.get(scenario, "absent")
        for cap, scenario in SHOWN_BY.items()
        if getattr(caps, cap) and not column.get(scenario, "").startswith("✅")
    }
    assert not unbacked, f"{target} claims capabilities no passing run shows: {unbacked}"
