"""Store readers are total: hostile records and files give fewer events, never an exception.

Every recorded record (``corral record AGENT store``) is fed with each of its fields, and each
field of its ``message``/``payload``, replaced by values of the wrong type; every event that comes
out must still encode. Header reading gets truncated, binary and oversized files.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import msgspec
import pytest

from corral.adapters._store_common import FileStat
from corral.adapters._store_sqlite import StoreUnreadable
from corral.adapters._stores import headers, scan
from corral.events import encode

from ._recorded import Recorded, recorded

CLIS = ["claude", "codex", "gemini", "qwen", "pi", "opencode", "hermes"]
JSONL_CLIS = CLIS[:5]
HOSTILE: list[Any] = [None, 0, -1, 1.5, True, "", "\ud800x", [], [None, 1, "x"], {}, {"type": 3}]


@pytest.fixture(params=CLIS)
def rec(request: pytest.FixtureRequest, tmp_path: Path) -> Recorded:
    return recorded(request.param, tmp_path)


def _variants(record: dict[str, Any]) -> list[Any]:
    out: list[Any] = list(HOSTILE)
    for key in record:
        for bad in HOSTILE:
            mutated = copy.deepcopy(record)
            mutated[key] = bad
            out.append(mutated)
    for inner in ("message", "payload", "part"):
        body = record.get(inner)
        if not isinstance(body, dict):
            continue
        for key in body:
            for bad in HOSTILE:
                mutated = copy.deepcopy(record)
                mutated[inner][key] = bad
                out.append(mutated)
        content = body.get("content")
        if isinstance(content, list):
            for i, part in enumerate(content):
                for key in part if isinstance(part, dict) else ():
                    for bad in HOSTILE:
                        mutated = copy.deepcopy(record)
                        mutated[inner]["content"][i][key] = bad
                        out.append(mutated)
    return out


def test_parser_survives_every_mutated_record(rec: Recorded) -> None:
    (entry,) = scan(rec.module, rec.env)
    records = list(rec.module.records_of(Path(entry.path)))
    assert records
    fed = 0
    parser = rec.module.Parser()
    for record in records:
        for variant in _variants(record):
            for event in parser.feed(variant):
                encode(event)  # what a parser makes, the store can keep
            fed += 1
    assert fed > 100
    assert parser.skipped == 0  # total by construction, not only by the guard


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\x00\xff" * 5000,
        b"{" * 100_000,
        b"[]\n" * 10,
        b'{"type":"user"}\n' * 3,
        b"x" * (1 << 20),
    ],
)
def test_header_of_a_hostile_file_never_raises(
    rec: Recorded, tmp_path: Path, content: bytes
) -> None:
    (entry,) = scan(rec.module, rec.env)
    path = Path(entry.path)
    path.write_bytes(content)
    st = path.stat()
    stat = FileStat(str(path), st.st_mtime, st.st_size, st.st_ino)
    try:
        entries = headers(rec.module, stat)
    except StoreUnreadable:  # a database store says it cannot read the file (only those do)
        assert hasattr(rec.module, "RECORD_TABLES")
        entries = []
    for found in entries:
        msgspec.json.encode(found)
        assert found.title is None
    for listed in rec.module.scan(rec.env):  # the hook never raises; a transcript is still listed
        assert listed.title is None and not hasattr(rec.module, "RECORD_TABLES")


@pytest.mark.parametrize("cli", JSONL_CLIS)
def test_header_reads_only_the_head(cli: str, tmp_path: Path) -> None:
    """A transcript with a huge body lists the same as the recorded one (the tail is not read)."""
    rec = recorded(cli, tmp_path)
    (entry,) = scan(rec.module, rec.env)
    path = Path(entry.path)
    with path.open("ab") as handle:
        handle.write(b"\xff garbage that is never read\n" * 200_000)
    (again,) = scan(rec.module, rec.env)
    assert (again.sid, again.cwd, again.title) == (entry.sid, entry.cwd, entry.title)
    assert again.size > 5_000_000
