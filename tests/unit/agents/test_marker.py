"""The install marker is plain JSON: written, read back, and refused when it is not a marker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from corral.agents import Pin
from corral.agents._layout import MARKER, Marker, read_marker, write_marker

PIN = Pin(name="toy", registry="npm", package="@toy/cli", version="1.2.3", bins=("toy",))
MARK = Marker(
    name="toy",
    package="@toy/cli",
    version="1.2.3",
    binary="/x/toy",
    version_output="toy 1.2.3",
    installed_at="2026-01-01T00:00:00+00:00",
    seconds=1.5,
)


def test_round_trip(tmp_path: Path) -> None:
    write_marker(tmp_path, MARK)
    assert read_marker(PIN, tmp_path) == MARK
    other = Pin(name="toy", registry="npm", package="@toy/cli", version="9", bins=("toy",))
    assert read_marker(other, tmp_path) is None  # a marker of another version


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[]",
        json.dumps({**MARK.__dict__, "seconds": "fast"}),
        json.dumps({**MARK.__dict__, "seconds": True}),
        json.dumps({**MARK.__dict__, "version": 1}),
        json.dumps({k: v for k, v in MARK.__dict__.items() if k != "binary"}),
        json.dumps({**MARK.__dict__, "extra": "x"}),
    ],
)
def test_anything_else_is_no_marker(tmp_path: Path, text: str) -> None:
    (tmp_path / MARKER).write_text(text)
    assert read_marker(PIN, tmp_path) is None


def test_a_marker_with_a_byte_order_mark_reads_as_json_reads_it(tmp_path: Path) -> None:
    write_marker(tmp_path, MARK)
    marker = tmp_path / MARKER
    marker.write_bytes(b"\xef\xbb\xbf" + marker.read_bytes())
    assert json.loads(marker.read_bytes())["version"] == "1.2.3"
    assert read_marker(PIN, tmp_path) == MARK
