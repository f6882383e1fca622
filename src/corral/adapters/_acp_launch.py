"""Pure helpers of the ACP driver: the launch (argv and env) and the prompt content blocks.

Nothing here starts a process or touches the disk (attachments given by path are read by the
caller before :func:`prompt_blocks` is asked to embed them).
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .base import Attachment


@dataclass(frozen=True)
class AcpLaunch:
    """How to start one ACP agent: the full argv and the environment overlay."""

    argv: tuple[str, ...]
    env: Mapping[str, str]

    def environ(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        merged = dict(os.environ if base is None else base)
        merged.update(self.env)
        return merged


def _has_flag(args: Sequence[str], flags: Sequence[str]) -> bool:
    return any(a in flags or any(a.startswith(f + "=") for f in flags) for a in args)


def build_launch(
    binary: str,
    acp_args: Sequence[str],
    *,
    model: str | None = None,
    model_flags: Sequence[str] = (),
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> AcpLaunch:
    """``binary acp_args… [--model M] extra_args…`` and the env overlay.

    ``model`` goes on the command line only when the agent takes a model flag (``model_flags``,
    the first is used) and ``extra_args`` do not already carry one (endpoint redirection may).
    """
    argv = [binary, *acp_args]
    if model and model_flags and not _has_flag(extra_args, model_flags):
        argv += [model_flags[0], model]
    argv += list(extra_args)
    return AcpLaunch(argv=tuple(argv), env=dict(env or {}))


def _dump(block: Any) -> dict[str, Any]:
    out: dict[str, Any] = block.model_dump(mode="json", by_alias=True, exclude_none=True)
    return out


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
    """
    from acp.schema import (  # the SDK's pydantic schema: once the agent runs (issue 20)
        BlobResourceContents,
        EmbeddedResourceContentBlock,
        ImageContentBlock,
        ResourceContentBlock,
        TextContentBlock,
        TextResourceContents,
    )

    blocks: list[dict[str, Any]] = [_dump(TextContentBlock(type="text", text=text))]
    for att in attachments:
        name = att.name or (Path(att.path).name if att.path else "attachment")
        uri = Path(att.path).resolve().as_uri() if att.path else f"attachment:{name}"
        if att.is_image:
            if not image:
                raise ConfigError(f"the agent does not accept images ({name})")
            data = base64.b64encode(att.read_bytes()).decode()
            block: Any = ImageContentBlock(
                type="image", data=data, mime_type=att.media_type, uri=att.path and uri
            )
        elif embedded_context:
            raw = att.read_bytes()
            try:
                resource: Any = TextResourceContents(
                    uri=uri, text=raw.decode("utf-8"), mime_type=att.media_type
                )
            except UnicodeDecodeError:
                resource = BlobResourceContents(
                    uri=uri, blob=base64.b64encode(raw).decode(), mime_type=att.media_type
                )
            block = EmbeddedResourceContentBlock(type="resource", resource=resource)
        elif att.path:
            block = ResourceContentBlock(
                type="resource_link", uri=uri, name=name, mime_type=att.media_type
            )
        else:
            raise ConfigError(f"the agent takes neither embedded files nor this one ({name})")
        blocks.append(_dump(block))
    return blocks
