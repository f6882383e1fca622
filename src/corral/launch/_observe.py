"""``--observe``: the harness's structured stdout, teed into corral's parser.

The bytes reach the user unchanged (the runner writes them first); a copy is split into lines
(each capped at :data:`MAX_LINE`), decoded as JSON and fed to the parser of the harness's wire
protocol. The events become a session record, ``<corral home>/launch/observed/<id>.jsonl`` (one
event per line, then a ``summary`` line: token usage, cost, event count, exit code). Nothing a
harness prints can make this raise: undecodable lines are counted and skipped.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_LINE = 4 * 1024 * 1024

PARSERS = {"claude": "claude", "qwen": "claude", "codex": "codex"}
"""Harness → the parser of its one-shot structured output."""


def _parser(harness: str) -> Any:
    kind = PARSERS[harness]
    if kind == "codex":
        from ..protocols.codex_exec import ExecParser

        return ExecParser()
    from ..protocols.claude_stream_json import ClaudeStreamParser

    return ClaudeStreamParser()


@dataclass
class Summary:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cost_usd: float | None = None
    events: int = 0
    skipped_lines: int = 0
    exit_code: int | None = None
    record: str | None = None
    types: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "cacheReadTokens": self.cache_read_tokens,
            "costUsd": self.cost_usd,
            "events": self.events,
            "skippedLines": self.skipped_lines,
            "exitCode": self.exit_code,
            "record": self.record,
        }


class Observation:
    def __init__(self, harness: str, directory: Path | None = None) -> None:
        if directory is None:
            from .._paths import home_dir

            directory = home_dir() / "launch" / "observed"
        directory.mkdir(parents=True, exist_ok=True)
        self.id = (
            f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{harness}-{uuid.uuid4().hex[:8]}"
        )
        self.path = directory / f"{self.id}.jsonl"
        self._file = self.path.open("wb")
        self._parser = _parser(harness)
        self._buf = b""
        self._dropping = False
        self.summary_data = Summary(record=str(self.path))

    def feed(self, chunk: bytes) -> None:
        self._buf += chunk
        while True:
            nl = self._buf.find(b"\n")
            if nl < 0:
                if len(self._buf) > MAX_LINE:
                    self._buf = b""
                    self._dropping = True
                return
            line, self._buf = self._buf[:nl], self._buf[nl + 1 :]
            if self._dropping:
                self._dropping = False
                self.summary_data.skipped_lines += 1
                continue
            self._line(line)

    def _line(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            obj = json.loads(line)
        except ValueError:
            self.summary_data.skipped_lines += 1
            return
        if not isinstance(obj, dict):
            self.summary_data.skipped_lines += 1
            return
        try:
            events = self._parser.feed(obj)
        except Exception:  # a parser is total; this only guards the user's session
            self.summary_data.skipped_lines += 1
            return
        self._record(events)

    def _record(self, events: list[Any]) -> None:
        import msgspec

        from ..events import Usage

        for event in events:
            s = self.summary_data
            s.events += 1
            tag = type(event).__name__
            s.types[tag] = s.types.get(tag, 0) + 1
            if isinstance(event, Usage):
                s.input_tokens += event.input_tokens or 0
                s.output_tokens += event.output_tokens or 0
                s.cache_read_tokens += event.cache_read_tokens or 0
                if event.cost_usd is not None:
                    s.cost_usd = (s.cost_usd or 0.0) + event.cost_usd
            try:
                self._file.write(msgspec.json.encode(event) + b"\n")
            except (TypeError, ValueError, msgspec.EncodeError):
                s.skipped_lines += 1

    def finish(self, exit_code: int | None = None) -> Summary:
        if self._buf.strip() and not self._dropping:
            self._line(self._buf)
        self._buf = b""
        try:
            tail = self._parser.finish()
        except TypeError:
            tail = []
        except Exception:
            tail = []
        self._record(tail)
        self.summary_data.exit_code = exit_code
        self._file.write(
            json.dumps({"type": "summary", **self.summary_data.as_dict()}).encode() + b"\n"
        )
        self._file.close()
        return self.summary_data
