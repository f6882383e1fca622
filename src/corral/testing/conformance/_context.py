"""What a scenario gets: the target, the scripted model server, a fresh workspace."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from ._session import LiveSession
from ._types import Target, Workspace


@dataclass
class Context:
    target: Target
    server: Any
    """The running ``FakeModelServer``; its request log is the ground truth."""
    workspace: Workspace
    timeout: float

    @contextlib.asynccontextmanager
    async def session(self, **init: Any) -> AsyncIterator[LiveSession]:
        """A started adapter pointed at the scripted server, stopped on exit."""
        adapter = self.target.make_adapter(
            base_url=self.server.base_url,
            home=self.workspace.home,
            cwd=self.workspace.repo,
            **init,
        )
        async with LiveSession(adapter) as live:
            yield live

    def server_release(self) -> None:
        """Let any held reply go (a cancelled turn may have left one holding)."""
        release = getattr(self.server, "release_holds", None)
        if release is not None:
            release()
