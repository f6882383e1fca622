"""``_pins_data.py`` is pins.toml parsed (``scripts/gen_pins_data.py``), and pins.toml wins."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from corral.agents import _pins, _pins_data
from corral.agents._pins import PINS_FILE, parse_pins, pins_from


def test_the_parsed_copy_is_current() -> None:
    text = Path(PINS_FILE).read_text("utf-8")
    assert text == _pins_data.SOURCE, "pins.toml changed: run python scripts/gen_pins_data.py"
    assert tomllib.loads(text)["agents"] == _pins_data.AGENTS


def test_the_copy_gives_the_pins_parsing_gives() -> None:
    assert pins_from(_pins_data.AGENTS) == parse_pins(Path(PINS_FILE).read_text("utf-8"))
    assert _pins.pinned() == list(parse_pins(Path(PINS_FILE).read_text("utf-8")))


def test_an_edited_pins_file_is_parsed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    edited = tmp_path / "pins.toml"
    edited.write_text(
        Path(PINS_FILE).read_text("utf-8").replace('version = "2.1.197"', 'version = "9.9.9"'),
        "utf-8",
    )
    monkeypatch.setattr(_pins, "PINS_FILE", edited)
    _pins.forget_packaged_pins()
    try:
        assert _pins.get_pin("claude").version == "9.9.9"
    finally:
        _pins.forget_packaged_pins()
