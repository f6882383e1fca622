"""docs/intents.md is generated (scripts/gen_intents_doc.py) and must match the code as it is."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_intents_page_is_current() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_intents_doc.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr


def test_every_offered_intent_has_a_passing_row_per_action() -> None:
    text = (ROOT / "docs" / "intents.md").read_text()
    results = text.split("## Results on the pinned CLIs", 1)[1]
    assert "❌" not in results
    for intent in ("ask", "review", "work", "act-pr", "full"):
        assert f"| `{intent}` |" in results, intent
