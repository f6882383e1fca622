"""A tiny fake agent whose process echoes API keys on stderr and dies (for the redaction test).

Loaded by a real ``corral serve`` through ``CORRAL_EXTRA_ADAPTERS=leaky_agent:LeakyAgent`` with
this directory on ``PYTHONPATH``. Its process gets ``LEAKY_API_KEY`` from corral (a value of no
known shape) and prints it with a key of a known shape; the session then ends ``failed`` with the
stderr tail, as a real adapter reports a crashed CLI. With ``model="raise"`` its event stream
raises an error whose message holds the key instead (a driver bug quoting what it read).
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Callable, Sequence

from corral._process import ProcessTransport
from corral.adapters.base import Attachment, BaseAdapter
from corral.events import AgentInfo, EndReason, Event, SessionEnded

SCRIPT = """
import os, sys
sys.stderr.write("auth failed for key " + os.environ["LEAKY_API_KEY"] + "\\n")
sys.stderr.write("fallback sk-ant-api03-" + "A1b2C3d4" * 6 + " rejected\\n")
sys.stderr.write("Authorization: Bearer " + "tok3n" * 6 + "\\n")
sys.exit(3)
"""


class LeakyAgent(BaseAdapter):
    agent_id = "leaky"
    display_name = "Leaky (test)"
    provides_models = False
    provides_usage = False

    def __init__(
        self,
        cwd: str | None = None,
        model: str | None = None,
        resume_session_id: str | None = None,
        on_session_id: Callable[[str], None] | None = None,
        effort: str | None = None,
    ) -> None:
        self.cwd = cwd
        self.model = model
        self.transport: ProcessTransport | None = None

    async def start(self, session_id: str) -> AgentInfo:
        env = {**os.environ, "LEAKY_API_KEY": os.environ["LEAKY_TEST_SECRET"]}
        self.transport = ProcessTransport([sys.executable, "-c", SCRIPT], env=env, cwd=self.cwd)
        await self.transport.start()
        return self.make_agent_info(version="0")

    async def send(self, text: str, attachments: Sequence[Attachment] | None = None) -> None:
        return None

    async def stream(self) -> AsyncIterator[Event]:
        assert self.transport is not None
        code = await self.transport.wait(30)
        if self.model == "raise":
            raise RuntimeError(f"driver choked on {os.environ['LEAKY_TEST_SECRET']}")
        yield SessionEnded(
            reason=EndReason.FAILED, exit_code=code, stderr_tail=self.transport.stderr_tail
        )

    async def stop(self) -> None:
        if self.transport is not None:
            await self.transport.kill()
