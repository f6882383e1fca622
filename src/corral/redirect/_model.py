"""The value every redirection returns, and the helpers the per-CLI modules share."""

from __future__ import annotations

import os
from pathlib import Path

from .._record import dataclass, field

TYPE_CHECKING = False  # ``typing`` costs ``corral launch``'s start-up (decision 036)
if TYPE_CHECKING:
    from collections.abc import Mapping


@dataclass(frozen=True)
class Redirection:
    """How to start one agent CLI so that it talks to a given model endpoint and nothing else.

    ``env`` is added to (and wins over) the caller's environment; ``argv`` is appended after the
    CLI's own mode arguments and before the prompt; ``files`` (absolute path → text) and ``dirs``
    are created by ``apply()``. Building one is pure: nothing touches the disk until ``apply``.
    """

    agent: str
    env: Mapping[str, str]
    argv: tuple[str, ...] = ()
    files: Mapping[Path, str] = field(default_factory=dict)
    dirs: tuple[Path, ...] = ()

    def apply(self) -> None:
        """Create ``dirs`` and write ``files`` (parents created, existing files overwritten)."""
        for directory in self.dirs:
            directory.mkdir(parents=True, exist_ok=True)
        for path, text in self.files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")

    def environ(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """``base`` (default: ``os.environ``) overlaid with ``env``, ready for ``subprocess``."""
        merged = dict(os.environ if base is None else base)
        merged.update(self.env)
        return merged


def root_url(base_url: str) -> str:
    """The server root: ``http://h:p`` from ``http://h:p``, ``http://h:p/`` or ``http://h:p/v1``."""
    url = base_url.rstrip("/")
    return url.removesuffix("/v1")


def v1_url(base_url: str) -> str:
    """The OpenAI-style API base: the server root plus ``/v1``."""
    return root_url(base_url) + "/v1"


def home_env(home: Path) -> dict[str, str]:
    """HOME and the XDG base dirs, all inside the isolated home."""
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
    }
