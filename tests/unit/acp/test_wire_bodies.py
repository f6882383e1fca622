"""The ACP driver's request bodies are plain JSON (decision 039): each is, key for key and in the
same order, what the SDK's schema type dumps, and a run never imports the SDK's pydantic schema."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.schema import (
    BlobResourceContents,
    ClientCapabilities,
    EmbeddedResourceContentBlock,
    FileSystemCapabilities,
    ImageContentBlock,
    Implementation,
    InitializeRequest,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from corral._version import __version__
from corral.adapters._acp_handshake import PROTOCOL_VERSION, client_capabilities, initialize
from corral.adapters._acp_launch import prompt_blocks
from corral.adapters.base import Attachment


def _dump(model: Any) -> str:
    return json.dumps(model.model_dump(mode="json", by_alias=True, exclude_none=True))


def test_the_protocol_version_is_the_sdks() -> None:
    assert PROTOCOL_VERSION == acp.PROTOCOL_VERSION


@pytest.mark.parametrize("read", [True, False])
@pytest.mark.parametrize("write", [True, False])
@pytest.mark.parametrize("terminal", [True, False])
def test_client_capabilities_are_the_sdks(read: bool, write: bool, terminal: bool) -> None:
    sdk = ClientCapabilities(
        fs=FileSystemCapabilities(read_text_file=read, write_text_file=write), terminal=terminal
    )
    mine = client_capabilities(read=read, write=write, terminal=terminal)
    assert json.dumps(mine) == _dump(sdk)


class _Client:
    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []

    async def request(self, method: str, params: Any) -> Any:
        self.sent.append((method, params))
        return {"protocolVersion": 1, "agentCapabilities": {}}


async def test_the_initialize_request_is_the_sdks() -> None:
    client = _Client()
    caps = client_capabilities(read=True, write=False, terminal=True)
    raw = await initialize(client, caps)  # type: ignore[arg-type]
    assert raw == {"protocolVersion": 1, "agentCapabilities": {}}
    sdk = InitializeRequest(
        protocol_version=acp.PROTOCOL_VERSION,
        client_capabilities=ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=True, write_text_file=False), terminal=True
        ),
        client_info=Implementation(name="corral", title="corral", version=__version__),
    )
    assert client.sent == [("initialize", json.loads(_dump(sdk)))]
    assert json.dumps(client.sent[0][1]) == _dump(sdk)


def test_prompt_blocks_are_the_sdks(tmp_path: Path) -> None:
    doc = tmp_path / "notes.md"
    doc.write_text("# notes")
    shot = tmp_path / "shot.png"
    shot.write_bytes(b"\x89PNG")
    uri, shot_uri = doc.resolve().as_uri(), shot.resolve().as_uri()
    png = Attachment(data=b"\x89PNG", media_type="image/png", name="p.png")
    png_file = Attachment(path=str(shot), media_type="image/png")
    text_file = Attachment(path=str(doc), media_type="text/markdown")
    blob = Attachment(data=b"\xff\xfe", media_type="application/octet-stream", name="b.bin")
    embedded = prompt_blocks(
        "hi", [png, png_file, text_file, blob], image=True, embedded_context=True
    )
    b64 = "iVBORw=="
    assert [json.dumps(b) for b in embedded] == [
        _dump(TextContentBlock(type="text", text="hi")),
        _dump(ImageContentBlock(type="image", data=b64, mime_type="image/png", uri=None)),
        _dump(ImageContentBlock(type="image", data=b64, mime_type="image/png", uri=shot_uri)),
        _dump(
            EmbeddedResourceContentBlock(
                type="resource",
                resource=TextResourceContents(uri=uri, text="# notes", mime_type="text/markdown"),
            )
        ),
        _dump(
            EmbeddedResourceContentBlock(
                type="resource",
                resource=BlobResourceContents(
                    uri="attachment:b.bin", blob="//4=", mime_type="application/octet-stream"
                ),
            )
        ),
    ]
    linked = prompt_blocks("hi", [text_file])
    assert json.dumps(linked[1]) == _dump(
        ResourceContentBlock(
            type="resource_link", uri=uri, name="notes.md", mime_type="text/markdown"
        )
    )


def test_an_acp_adapter_starts_without_the_sdk_schema(tmp_path: Path) -> None:
    """Importing and constructing an ACP adapter, and building its bodies, load no pydantic."""
    code = (
        "import sys\n"
        "from corral.adapters.base import construct\n"
        "from corral.adapters.gemini import GeminiAdapter\n"
        "from corral.adapters._acp_launch import prompt_blocks\n"
        f"a = construct(GeminiAdapter, cwd={str(tmp_path)!r})\n"
        "a.client_capabilities(); prompt_blocks('hi')\n"
        "assert a.init is None\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('acp', 'pydantic')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"


def test_init_is_the_answer_parsed_on_first_use(tmp_path: Path) -> None:
    from acp.schema import InitializeResponse

    from corral.adapters.base import construct
    from corral.adapters.gemini import GeminiAdapter

    adapter = construct(GeminiAdapter, cwd=str(tmp_path))
    assert adapter.init is None
    adapter.init_raw = {"protocolVersion": 1, "agentInfo": {"name": "g", "version": "1"}}
    assert isinstance(adapter.init, InitializeResponse)
    assert adapter.init.agent_info is not None and adapter.init.agent_info.name == "g"
    adapter.init_raw = {"protocolVersion": "not a number"}
    assert adapter.init is None  # an answer that does not validate: kept raw only
