"""Replay a recorded transcript through a parser, the way the stream-json driver feeds it.

``out`` lines go to ``feed``, ``in`` lines to ``feed_sent``. An ``exit`` marker is the CLI process
ending: after an interrupt we sent (a CLI that dies on interrupt) the open turn is cancelled, as the
driver does before it resumes; otherwise the parser is finished.
"""

from __future__ import annotations

import json
from pathlib import Path

from corral.events import Event
from corral.protocols.claude_stream_json import ClaudeStreamParser

TRANSCRIPTS = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"


def transcript(rel: str) -> Path:
    path = TRANSCRIPTS / rel
    assert path.is_file(), f"missing recorded fixture {rel} (record it with `corral record`)"
    return path


def entries(rel: str) -> list[dict]:
    return [json.loads(line) for line in transcript(rel).read_text("utf-8").splitlines() if line]


def replay(rel: str, parser: ClaudeStreamParser | None = None) -> list[Event]:
    parser = parser or ClaudeStreamParser()
    events: list[Event] = []
    interrupted = False
    for entry in entries(rel):
        direction = entry["dir"]
        if direction == "exit":
            events += parser.cancel_turn() if interrupted else parser.finish()
            interrupted = False
        elif "line" not in entry:
            continue
        elif direction == "out":
            events += parser.feed(entry["line"])
        else:
            line = entry["line"]
            if (
                line.get("type") == "control_request"
                and line["request"].get("subtype") == "interrupt"
            ):
                interrupted = True
            events += parser.feed_sent(line)
    return events
