"""The ``fs/*`` side of an ACP client: file reads and writes confined to the project root.

An agent that was told ``clientCapabilities.fs`` asks the client to read and write files
(``fs/read_text_file``, ``fs/write_text_file``). corral serves them only inside the session's
project root: the path is resolved with every symlink and ``..`` followed (``os.path.realpath``)
and must land inside the resolved root, else the request is refused with a JSON-RPC error. A
write never follows a symlink out of the root either, because the *resolved* target is checked.
Between the check and the write a hostile process could swap a directory for a symlink; the
agent is not such a process (it asked us to do the write), so the check is not repeated.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import JsonRpcError

INVALID_PARAMS = -32602
RESOURCE_NOT_FOUND = -32002
"""ACP's error code for a missing resource (file)."""
MAX_READ_BYTES = 16 * 1024 * 1024


class OutsideRoot(JsonRpcError):
    """A path that resolves outside the project root."""

    def __init__(self, path: str, root: Path) -> None:
        super().__init__(INVALID_PARAMS, f"path is outside the project root {root}: {path}")
        self.path = path


class ProjectFiles:
    """File access for one session, confined to ``root``."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(os.path.realpath(root))

    def resolve(self, path: str) -> Path:
        """The real path of ``path`` (relative paths are taken from the root), or ``OutsideRoot``."""
        if not isinstance(path, str) or not path or "\0" in path:
            raise JsonRpcError(INVALID_PARAMS, f"invalid path: {path!r}")
        candidate = Path(path) if os.path.isabs(path) else self.root / path
        real = Path(os.path.realpath(candidate))
        if real != self.root and self.root not in real.parents:
            raise OutsideRoot(path, self.root)
        return real

    def read(self, path: str, line: int | None = None, limit: int | None = None) -> dict[str, Any]:
        """``fs/read_text_file``: the text, optionally from 1-based ``line`` for ``limit`` lines."""
        real = self.resolve(path)
        try:
            if real.stat().st_size > MAX_READ_BYTES:
                raise JsonRpcError(INVALID_PARAMS, f"file too large to read: {path}")
            text = real.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            raise JsonRpcError(RESOURCE_NOT_FOUND, f"Resource not found: {path}") from None
        except IsADirectoryError:
            raise JsonRpcError(INVALID_PARAMS, f"is a directory: {path}") from None
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            end = start + limit if limit is not None else None
            text = "".join(lines[start:end])
        return {"content": text}

    def write(self, path: str, content: str) -> dict[str, Any]:
        """``fs/write_text_file``: create or replace the file (parents inside the root created)."""
        if not isinstance(content, str):
            raise JsonRpcError(INVALID_PARAMS, "content must be a string")
        real = self.resolve(path)
        if real.is_dir():
            raise JsonRpcError(INVALID_PARAMS, f"is a directory: {path}")
        real.parent.mkdir(parents=True, exist_ok=True)
        real.write_text(content, encoding="utf-8")
        return {}
