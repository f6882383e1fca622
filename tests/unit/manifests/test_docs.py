"""docs/manifests.md documents every rule id and every protocol the code knows."""

from __future__ import annotations

from pathlib import Path

from corral.manifests import PROTOCOLS, RULES

DOC = Path(__file__).resolve().parents[3] / "docs" / "manifests.md"


def test_every_rule_and_protocol_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    missing = [r for r in RULES if f"`{r}`" not in text]
    missing += [
        p
        for p, spec in PROTOCOLS.items()
        if f"| `{p}` | `{spec.prompt_delivery.value}`" not in text
    ]
    assert missing == []
