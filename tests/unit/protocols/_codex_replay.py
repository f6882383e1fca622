"""Replaying recorded Codex transcripts (tests/fixtures/transcripts/codex/<version>/) through the
parsers. The files are written by ``scripts/record_codex.py``; see its docstring for the format."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from corral.events import Event
from corral.protocols.codex_app_server import AppServerParser
from corral.protocols.codex_exec import ExecParser

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts" / "codex"
VERSION = "0.171.0"
DIR = FIXTURES / VERSION


@dataclass
class Process:
    """One CLI process of a recording: what corral sent, what the CLI printed, the events."""

    sent: list[dict[str, Any]] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    exit_code: int | None = None

    def of(self, cls: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, cls)]

    def sent_method(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.sent if m.get("method") == method]


def entries(name: str) -> list[dict[str, Any]]:
    path = DIR / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def replay(name: str) -> list[Process]:
    """Feed every stdout line to a fresh parser per process; exec files use the exec parser."""
    is_exec = name.startswith("exec-")
    processes: list[Process] = []
    current: Process | None = None
    parser: AppServerParser | ExecParser | None = None
    for entry in entries(name):
        if current is None:
            current = Process()
            parser = ExecParser() if is_exec else AppServerParser()
        assert parser is not None
        if entry["dir"] == "exit":
            current.exit_code = entry["code"]
            current.events += (
                parser.finish(entry["code"]) if isinstance(parser, ExecParser) else parser.finish()
            )
            processes.append(current)
            current = None
            continue
        line = entry.get("line")
        if entry["dir"] == "in":
            current.sent.append(line)
        elif isinstance(line, dict):
            current.received.append(line)
            current.events += parser.feed(line)
    if current is not None:
        processes.append(current)
    return processes


def fixture_names() -> list[str]:
    return sorted(p.name.removesuffix(".jsonl") for p in DIR.glob("*.jsonl"))
