"""Replay a recorded OpenCode-server or Pi-RPC transcript through its parser, as the driver does.

``out`` lines go to ``feed``, ``in`` lines (an HTTP exchange or an RPC command we sent) to
``feed_sent``, and ``exit`` (the server or CLI ended) to ``finish``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from corral.events import Event
from corral.protocols.opencode_sse import OpenCodeSseParser
from corral.protocols.pi_rpc import PiRpcParser

TRANSCRIPTS = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"


def entries(rel: str) -> list[dict[str, Any]]:
    path = TRANSCRIPTS / rel
    assert path.is_file(), f"missing fixture {rel} (python -m corral.testing._record_ocpi)"
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]


def replay(rel: str, parser: OpenCodeSseParser | PiRpcParser) -> list[Event]:
    events: list[Event] = []
    for entry in entries(rel):
        if entry["dir"] == "exit":
            events += parser.finish()
        elif "line" not in entry:
            continue
        elif entry["dir"] == "out":
            events += parser.feed(entry["line"])
        else:
            events += parser.feed_sent(entry["line"])
    return events


def of(events: list[Event], cls: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, cls)]
