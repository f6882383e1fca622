"""Pure helpers of the ACP driver: the launch (argv and env, from :mod:`._acp_argv`) and the
prompt content blocks.

Nothing here starts a process or touches the disk (attachments given by path are read by the
caller before :func:`prompt_blocks` is asked to embed them).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ._acp_argv import AcpLaunch as AcpLaunch
from ._acp_argv import build_launch as build_launch
from .base import Attachment


def prompt_blocks(
    text: str,
    attachments: Sequence[Attachment] = (),
    *,
    image: bool = False,
    embedded_context: bool = False,
) -> list[dict[str, Any]]:
    """The ``session/prompt`` content: the text, then one block per attachment.

    Images need the agent's ``promptCapabilities.image``; other files are embedded as resources
    when it has ``embeddedContext``, else passed as ``resource_link`` (by path). An attachment
    the agent cannot take raises ``ConfigError`` rather than being dropped silently.

    The blocks are plain JSON, key for key what the SDK's ``TextContentBlock``,
    ``ImageContentBlock``, ``EmbeddedResourceContentBlock`` and ``ResourceContentBlock`` dump
    (``tests/unit/acp/test_wire_bodies.py`` compares them): importing the SDK's pydantic schema
    costs about a second of CPU, on every ACP run (decision 039).
    """
    blocks: list[dict[str, Any]] = [{"text": text, "type": "text"}]
    for att in attachments:
        name = att.name or (Path(att.path).name if att.path else "attachment")
        uri = Path(att.path).resolve().as_uri() if att.path else f"attachment:{name}"
        if att.is_image:
            if not image:
                raise ConfigError(f"the agent does not accept images ({name})")
            data = base64.b64encode(att.read_bytes()).decode()
            block = _some({"data": data, "mimeType": att.media_type, "uri": att.path and uri})
            block["type"] = "image"
        elif embedded_context:
            raw = att.read_bytes()
            try:
                resource = _some({"mimeType": att.media_type, "text": raw.decode("utf-8")})
                resource["uri"] = uri
            except UnicodeDecodeError:
                blob = base64.b64encode(raw).decode()
                resource = _some({"blob": blob, "mimeType": att.media_type, "uri": uri})
            block = {"resource": resource, "type": "resource"}
        elif att.path:
            block = _some({"mimeType": att.media_type, "name": name, "uri": uri})
            block["type"] = "resource_link"
        else:
            raise ConfigError(f"the agent takes neither embedded files nor this one ({name})")
        blocks.append(block)
    return blocks


def _some(fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` without the ``None`` values (the SDK's ``exclude_none``)."""
    return {k: v for k, v in fields.items() if v is not None}
