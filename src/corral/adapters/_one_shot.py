"""What the one-process-per-prompt drivers share: interrupt, the end of the last process, status.

``codex-exec``, ``gemini-exec`` and ``opencode-run`` run one agent process per prompt, read its
lines in a pump task and know from their parser when the turn is over. Interrupting kills the
process group and waits (bounded) for the pump to emit the cancelled turn end; stopping lets a
process whose turn is over exit on its own (bounded), and kills one still in its turn.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, ClassVar, Protocol

from .._process import LineTransport
from ..errors import ProcessError, UnsupportedOperation

PUMP_WAIT = 5.0
"""Seconds the pump gets to finish after a kill, or to exit after its turn ended."""

EXIT_WAIT = 10.0
"""Seconds a process whose turn is over gets to exit before the next prompt's process starts."""


class _TurnParser(Protocol):
    turn_done: bool


class ProcessPerPrompt:
    """Mixin for an adapter: set ``_transport``, ``_pump``, ``_parser`` and ``_cancelled``."""

    _transport: LineTransport | None
    _pump: asyncio.Task[None] | None
    _parser: _TurnParser | None
    _cancelled: bool
    agent_id: ClassVar[str]
    kill_grace: ClassVar[float] = 2.0
    """Seconds between SIGTERM and SIGKILL of the process group on an interrupt."""

    def _running(self) -> bool:
        return self._pump is not None and not self._pump.done()

    async def _before_next_process(self) -> None:
        """Refuse a prompt while a turn runs; let the last process, its turn over, exit first."""
        if self._pump is None or self._pump.done():
            return
        if self._parser is None or not self._parser.turn_done:
            raise UnsupportedOperation(self.agent_id, "input during a turn")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._pump), EXIT_WAIT)

    async def interrupt(self) -> None:
        if self._transport is None or self._pump is None or self._pump.done():
            return
        self._cancelled = True
        await self._transport.kill(self.kill_grace)
        with contextlib.suppress(asyncio.CancelledError, ProcessError):
            await asyncio.wait_for(asyncio.shield(self._pump), PUMP_WAIT)

    async def _end_last_process(self) -> bool:
        """Let a process whose turn is over exit; kill one still in its turn. True if killed."""
        if self._pump is None or self._pump.done():
            return False
        if self._parser is not None and self._parser.turn_done:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._pump), PUMP_WAIT)
        if self._pump.done():
            return False
        await self.interrupt()
        return True

    def _process_status(self, alive: bool) -> dict[str, Any]:
        running = self._running()
        return {
            "alive": alive,
            "busy": running and not (self._parser is not None and self._parser.turn_done),
            "pid": self._transport.pid if running and self._transport is not None else None,
        }
