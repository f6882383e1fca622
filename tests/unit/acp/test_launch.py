"""The pure part of the ACP adapters: argv/env per vendor and the prompt content blocks."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from corral.adapters._acp_launch import build_launch, prompt_blocks
from corral.adapters.base import Attachment, construct
from corral.adapters.gemini import GeminiAdapter
from corral.adapters.hermes import HermesAdapter
from corral.adapters.kilo import KiloAdapter
from corral.adapters.opencode_acp import OpenCodeAcpAdapter
from corral.adapters.qwen_acp import QwenAcpAdapter
from corral.errors import ConfigError


@pytest.mark.parametrize(
    ("cls", "extra", "argv"),
    [
        (GeminiAdapter, [], ["gemini", "--acp", "--skip-trust", "--model", "m1"]),
        # the redirection already carries --model: no second one
        (
            GeminiAdapter,
            ["--model", "fake"],
            ["gemini", "--acp", "--skip-trust", "--model", "fake"],
        ),
        (GeminiAdapter, ["-m=fake"], ["gemini", "--acp", "--skip-trust", "-m=fake"]),
        (
            QwenAcpAdapter,
            ["--auth-type", "openai"],
            ["qwen", "--acp", "--model", "m1", "--auth-type", "openai"],
        ),
        (OpenCodeAcpAdapter, [], ["opencode", "acp"]),
        (HermesAdapter, [], ["hermes", "acp"]),
        (KiloAdapter, [], ["kilo", "acp"]),
    ],
)
def test_argv(cls: type, extra: list[str], argv: list[str], tmp_path: Path) -> None:
    adapter = construct(cls, cwd=str(tmp_path), model="m1", extra_args=extra, binary=argv[0])
    launch = adapter.build_launch()  # type: ignore[attr-defined]
    assert list(launch.argv) == argv


def test_default_binary_is_the_pinned_install_or_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CORRAL_AGENTS_DIR", str(tmp_path / "none"))
    monkeypatch.setenv("PATH", str(tmp_path))
    assert construct(GeminiAdapter, cwd=str(tmp_path)).build_launch().argv[0] == "gemini"  # type: ignore[attr-defined]


def test_env_overlay_and_vendor_default(tmp_path: Path) -> None:
    oc = construct(OpenCodeAcpAdapter, cwd=str(tmp_path), env={"A": "1"}).build_launch()  # type: ignore[attr-defined]
    assert oc.env["A"] == "1"
    assert json.loads(oc.env["OPENCODE_PERMISSION"])["bash"] == "ask"
    mine = construct(
        OpenCodeAcpAdapter, cwd=str(tmp_path), env={"OPENCODE_PERMISSION": "{}"}
    ).build_launch()  # type: ignore[attr-defined]
    assert mine.env["OPENCODE_PERMISSION"] == "{}"
    assert mine.environ({"PATH": "/bin"}) == {"PATH": "/bin", "OPENCODE_PERMISSION": "{}"}
    assert build_launch("x", ("acp",), env=None).env == {}


def test_prompt_blocks_image_text_and_links(tmp_path: Path) -> None:
    png = Attachment(data=b"\x89PNG", media_type="image/png", name="p.png")
    doc = tmp_path / "notes.md"
    doc.write_text("# notes")
    text_file = Attachment(path=str(doc), media_type="text/markdown")
    blob = Attachment(data=b"\xff\xfe", media_type="application/octet-stream", name="b.bin")
    blocks = prompt_blocks("hi", [png, text_file, blob], image=True, embedded_context=True)
    assert blocks[0] == {"type": "text", "text": "hi"}
    assert blocks[1] == {
        "type": "image",
        "data": base64.b64encode(b"\x89PNG").decode(),
        "mimeType": "image/png",
    }
    assert blocks[2]["type"] == "resource"
    assert blocks[2]["resource"] == {
        "uri": doc.resolve().as_uri(),
        "text": "# notes",
        "mimeType": "text/markdown",
    }
    assert blocks[3]["resource"]["blob"] == base64.b64encode(b"\xff\xfe").decode()
    linked = prompt_blocks("hi", [text_file])
    assert linked[1] == {
        "type": "resource_link",
        "uri": doc.resolve().as_uri(),
        "name": "notes.md",
        "mimeType": "text/markdown",
    }


def test_prompt_blocks_refuse_what_the_agent_cannot_take() -> None:
    with pytest.raises(ConfigError):
        prompt_blocks("hi", [Attachment(data=b"x", media_type="image/png")], image=False)
    with pytest.raises(ConfigError):
        prompt_blocks("hi", [Attachment(data=b"x", media_type="text/plain")])


def test_kilo_asks_the_client_before_edits_commands_and_fetches(tmp_path: Path) -> None:
    launch = construct(KiloAdapter, cwd=str(tmp_path)).build_launch()  # type: ignore[attr-defined]
    assert json.loads(launch.env["KILO_PERMISSION"]) == {
        "edit": "ask",
        "bash": "ask",
        "webfetch": "ask",
    }
    assert "OPENCODE_PERMISSION" not in launch.env
