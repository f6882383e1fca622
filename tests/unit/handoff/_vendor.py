"""A stand-in vendor for the hand-off flow: a JSONL store per session and a switchable terminal.

``FakeVendor.store`` holds ``<sid>.jsonl`` files: a header line ``{"cwd": …}`` then one line per
message (``{"text": …}``), as a vendor CLI appends them. The scripted adapter, resumed with a
vendor id, appends every prompt it accepts and its reply to that file, so the store is the ground
truth of what the "agent" received. ``terminal`` is the set of sids a terminal holds now.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from corral.adapters._handoff import ExternalSession, HandoffKind, TranscriptMirror
from corral.adapters.base import Attachment
from corral.events import Event, TextComplete
from corral.testing.scripted_adapter import ScriptedAdapter


class Mirror:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._closed = False

    async def events(self) -> AsyncIterator[Event]:
        offset = 0
        first = True
        while not self._closed:
            data = self.path.read_bytes() if self.path.exists() else b""
            while b"\n" in data[offset:]:
                end = data.index(b"\n", offset)
                line = json.loads(data[offset:end])
                offset = end + 1
                if first:
                    first = False
                    continue
                yield TextComplete(text=line["text"])
            await asyncio.sleep(0.02)

    async def close(self) -> None:
        self._closed = True


def vendor_adapter(store: Path, terminal: set[str]) -> type[ScriptedAdapter]:
    class FakeVendorAdapter(ScriptedAdapter):
        handoff_kind: ClassVar[HandoffKind | None] = "persistent"
        store_dir: ClassVar[Path] = store
        held: ClassVar[set[str]] = terminal

        @classmethod
        def scan_external_sessions(
            cls, *, env: Mapping[str, str] | None = None, since: float | None = None
        ) -> Iterator[ExternalSession]:
            for path in sorted(cls.store_dir.glob("*.jsonl")):
                header = json.loads(path.read_text().splitlines()[0])
                stat = path.stat()
                yield ExternalSession(
                    agent_id="scripted",
                    sid=path.stem,
                    cwd=header["cwd"],
                    path=str(path),
                    mtime=stat.st_mtime,
                    size=stat.st_size,
                )

        @classmethod
        def is_cwd_externally_owned(
            cls, cwd: str, sid: str | None, *, env: Mapping[str, str] | None = None
        ) -> bool:
            return sid in cls.held

        @classmethod
        def make_transcript_mirror(
            cls, cwd: str, sid: str, *, env: Mapping[str, str] | None = None
        ) -> TranscriptMirror:
            return Mirror(cls.store_dir / f"{sid}.jsonl")

        @classmethod
        def latest_sid_for_cwd(
            cls, cwd: str, *, env: Mapping[str, str] | None = None
        ) -> str | None:
            mine = [e for e in cls.scan_external_sessions() if e.cwd == cwd]
            return max(mine, key=lambda e: e.mtime).sid if mine else None

        @classmethod
        def terminal_resume_command(
            cls, sid: str, *, cwd: str, binary: str | None = None
        ) -> list[str]:
            return [binary or "vendor", "--resume", sid]

        def _append(self, text: str) -> None:
            sid = self.agent_session_id
            path = self.store_dir / f"{sid}.jsonl"
            if path.exists():
                with path.open("a") as fh:
                    fh.write(json.dumps({"text": text}) + "\n")

        async def send_acknowledged(
            self, text: str, attachments: Sequence[Attachment] | None, *, ack: Callable[[], None]
        ) -> None:
            self._append(text)
            await super().send_acknowledged(text, attachments, ack=ack)

    return FakeVendorAdapter


def write_session(store: Path, sid: str, cwd: str | Path, *texts: str) -> Path:
    store.mkdir(parents=True, exist_ok=True)
    path = store / f"{sid}.jsonl"
    lines = [json.dumps({"cwd": str(cwd)}), *(json.dumps({"text": t}) for t in texts)]
    path.write_text("\n".join(lines) + "\n")
    return path


def append(path: Path, text: str) -> None:
    with path.open("a") as fh:
        fh.write(json.dumps({"text": text}) + "\n")


def texts(path: Path) -> list[str]:
    return [json.loads(line)["text"] for line in path.read_text().splitlines()[1:]]


def received(entries: Sequence[Any]) -> list[str]:
    return [e["text"] for e in entries]
