"""The transcript file format, written by every recorder and read by :class:`Recording`.

``<out>/<cli>/<version>/<scenario>.jsonl`` holds one entry per line the transport saw:
``{"dir": "in"|"out", "line": <JSON>}`` (``"text"`` instead of ``"line"`` for a line that is not
JSON) and ``{"dir": "exit", "code": N}`` where a process ended. ``<scenario>.meta.json`` next to it
says how it was recorded (CLI, version, scenario, argv, date, the command that re-records it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._process import Direction


def entry(direction: str, raw: bytes) -> dict[str, Any]:
    """One transcript entry for a line (or an exit code) a transport tap saw."""
    if direction == "exit":
        return {"dir": "exit", "code": int(raw)}
    try:
        return {"dir": direction, "line": json.loads(raw)}
    except ValueError:
        return {"dir": direction, "text": raw.decode("utf-8", errors="replace")}


def encode(lines: Iterable[tuple[Direction, bytes]]) -> str:
    """The ``.jsonl`` text of tapped lines."""
    return "".join(json.dumps(entry(d, raw), ensure_ascii=False) + "\n" for d, raw in lines)


@dataclass
class Tape:
    """A transport ``tap`` that keeps every line, in both directions, for :func:`write`."""

    lines: list[tuple[Direction, bytes]] = field(default_factory=list)

    def tap(self, direction: Direction, raw: bytes) -> None:
        self.lines.append((direction, raw))

    def entries(self) -> list[dict[str, Any]]:
        return [entry(d, raw) for d, raw in self.lines]


def write(
    out: Path,
    cli: str,
    version: str,
    scenario: str,
    entries: Iterable[Mapping[str, Any]],
    meta: Mapping[str, Any],
    *,
    scrub: Mapping[str, str] | None = None,
) -> Path:
    """Write ``<scenario>.jsonl`` and its ``.meta.json``; ``scrub`` replaces strings (temp paths)."""
    text = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries)
    meta_text = json.dumps(dict(meta), indent=2) + "\n"
    for old, new in (scrub or {}).items():
        text, meta_text = text.replace(old, new), meta_text.replace(old, new)
    folder = out / cli / version
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{scenario}.jsonl"
    path.write_text(text, encoding="utf-8")
    path.with_suffix(".meta.json").write_text(meta_text, encoding="utf-8")
    return path


def read(path: Path | str) -> list[dict[str, Any]]:
    """The entries of a ``.jsonl`` transcript."""
    text = Path(path).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]
