"""The fake model's ``split-emoji`` scenario really cuts the surrogate pair between two frames, on
every wire API a conformance target uses (so the real-CLI test exercises the joiners)."""

from __future__ import annotations

import httpx
import pytest

from corral.testing import FakeModelServer

TOOLS_CHAT = [{"type": "function", "function": {"name": "x", "parameters": {}}}]


@pytest.mark.timeout(30)
def test_split_emoji_frames_carry_the_two_halves() -> None:
    with FakeModelServer("split-emoji") as srv:
        chat = httpx.post(
            srv.base_url + "/v1/chat/completions",
            json={
                "model": "m",
                "stream": True,
                "messages": [{"role": "user", "content": "hi"}],
                "tools": TOOLS_CHAT,
            },
        ).text
        anthropic = httpx.post(
            srv.base_url + "/v1/messages",
            json={
                "model": "m",
                "stream": True,
                "max_tokens": 10,
                "messages": [{"role": "user", "content": "hi"}],
                "tools": [{"name": "x", "input_schema": {"type": "object"}}],
            },
        ).text
    for body in (chat, anthropic):
        first, second = body.index('"A\\ud83d"'), body.index('"\\ude00B"')
        assert first < second
        assert "\\ud83d\\ude00" not in body  # never written as one pair
