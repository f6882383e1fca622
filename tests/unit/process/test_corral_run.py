"""``corral run``'s loop (run_once) and argument checks, on the stand-in CLI (no real agent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from corral.cli.run import adapter_class, load_images, run_once
from corral.errors import AdapterNotFoundError, ConfigError

from .test_bad_input import BadClaude


async def test_json_run_streams_numbered_envelopes(capsys: pytest.CaptureFixture[str]) -> None:
    code = await run_once(
        BadClaude("ok"), "go", [], json_out=True, allow_all=False, interactive=False
    )
    assert code == 0
    envelopes = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [e["seq"] for e in envelopes] == list(range(1, len(envelopes) + 1))
    types = [e["event"]["type"] for e in envelopes]
    assert types[0] == "session.started"
    assert "turn.completed" in types
    assert types[-1] == "session.ended"
    assert {e["source"] for e in envelopes} == {"claude-code"}


async def test_a_failed_session_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    code = await run_once(
        BadClaude("eof"), "go", [], json_out=False, allow_all=False, interactive=False
    )
    assert code == 1
    assert "lost my mind" in capsys.readouterr().err


def test_adapter_lookup() -> None:
    assert adapter_class("claude").agent_id == "claude-code"
    assert adapter_class("qwen").agent_id == "qwen"
    with pytest.raises(AdapterNotFoundError):
        adapter_class("nope")


def test_images_must_exist_and_be_images(tmp_path: Path) -> None:
    png = tmp_path / "a.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n")
    (att,) = load_images([png])
    assert att.media_type == "image/png" and att.is_image
    text = tmp_path / "a.txt"
    text.write_text("x")
    with pytest.raises(ConfigError):
        load_images([text])
    with pytest.raises(ConfigError):
        load_images([tmp_path / "missing.png"])
