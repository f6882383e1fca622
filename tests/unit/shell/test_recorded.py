"""The screen differ on terminal output recorded from the real CLIs (``corral record``).

Each fixture holds what one real TUI printed (``out`` chunks) and what corral typed (``in``: the
prompts, the answers to its terminal queries, Ctrl-C). Replayed into a fresh
:class:`~corral.protocols.shell_screen.ScreenParser` with the adapter's own rules, every turn must
come out as the model's answer and nothing else — the same diff the live adapter made.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from corral.adapters.shell import AiderShellAdapter, ClaudeTuiAdapter, CodexTuiAdapter, ShellAdapter
from corral.events import StopReason
from corral.protocols.shell_screen import ScreenParser
from corral.testing.conformance._scenarios import HELLO

ROOT = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"
ADAPTERS: dict[str, type[ShellAdapter]] = {
    "aider-shell/0.86.2": AiderShellAdapter,
    "claude-tui/2.1.197": ClaudeTuiAdapter,
    "codex-tui/0.171.0": CodexTuiAdapter,
}
FIXTURES_USED = [
    f"{agent}/{scenario}.jsonl"
    for agent in ("aider-shell/0.86.2", "claude-tui/2.1.197", "codex-tui/0.171.0")
    for scenario in ("text", "follow-up", "cancel-mid-turn")
]
PROMPTS = {
    "text": ["Say hello."],
    "follow-up": ["Remember the word apple.", "Which word did I ask you to remember?"],
    "cancel-mid-turn": ["Tell me a long story.", "Say hello."],
}


def _data(entry: dict[str, Any]) -> bytes:
    text = entry["text"] if "text" in entry else json.dumps(entry["line"])
    return str(text).encode("utf-8")


def _turns(path: Path, adapter: type[ShellAdapter], prompts: list[str]) -> list[str]:
    """Replay ``path``; the text of each turn. A turn starts where its prompt was typed and ends
    where the next one was — the last where corral typed Ctrl-C to stop the session (what the
    program prints on its way out is no turn's)."""
    profile = adapter.load_profile()
    parser = ScreenParser(profile.rules, columns=profile.columns, rows=profile.rows)
    texts: list[str] = []
    todo = list(prompts)
    for line in path.read_text("utf-8").splitlines():
        entry = json.loads(line)
        if entry["dir"] == "out":
            parser.feed(_data(entry))
        elif entry["dir"] == "in" and todo and todo[0].encode() in _data(entry):
            if parser.in_turn:
                texts.append(parser.turn_text())
                parser.end_turn(StopReason.END_TURN)
            parser.begin_turn(todo.pop(0))
        elif entry["dir"] == "in" and not todo and _data(entry) == b"\x03":
            break
    assert not todo, f"prompts never typed: {todo}"
    texts.append(parser.turn_text())
    assert parser.errors == 0
    return texts


@pytest.mark.parametrize("agent", list(ADAPTERS))
def test_recorded_turns_are_the_answers(agent: str) -> None:
    adapter = ADAPTERS[agent]
    assert _turns(ROOT / agent / "text.jsonl", adapter, PROMPTS["text"]) == [HELLO]
    assert _turns(ROOT / agent / "follow-up.jsonl", adapter, PROMPTS["follow-up"]) == [
        HELLO,
        HELLO,
    ]
    story, after = _turns(
        ROOT / agent / "cancel-mid-turn.jsonl", adapter, PROMPTS["cancel-mid-turn"]
    )
    assert story.startswith("Once upon a time") and "\n" not in story.split("time")[0]
    assert after == HELLO
