"""Pieces both Codex drivers share: finding the binary, running its native executable, turning
attachments into inputs."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._codex_argv import native_argv_env as native_argv_env
from .base import Attachment
from .base import find_binary as base_find_binary


def find_binary(binary: str | None) -> str:
    return base_find_binary(binary, "codex")


class Attachments:
    """Turns attachments into codex ``UserInput`` items; inline bytes go to a private temp dir."""

    def __init__(self) -> None:
        self._dir: Path | None = None
        self._count = 0

    def path_of(self, att: Attachment) -> str:
        if att.path is not None:
            return str(Path(att.path).resolve())
        if self._dir is None:
            self._dir = Path(tempfile.mkdtemp(prefix="corral-codex-"))
        self._count += 1
        name = Path(att.name or f"attachment-{self._count}").name
        target = self._dir / f"{self._count}-{name}"
        target.write_bytes(att.read_bytes())
        return str(target)

    def items(self, text: str, attachments: Sequence[Attachment] | None) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = [{"type": "text", "text": text, "text_elements": []}]
        for att in attachments or ():
            path = self.path_of(att)
            if att.is_image:
                items.append({"type": "localImage", "path": path})
            else:  # codex has no document input: point the agent at the file
                items.append(
                    {"type": "text", "text": f"Attached file: {path}", "text_elements": []}
                )
        return items

    def cleanup(self) -> None:
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
