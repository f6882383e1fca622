"""``FakeModelServer``: the scripted model server, in-process (thread or event loop) or as a process.

One uvicorn server on 127.0.0.1. The listening socket is bound (port 0 = a free port) before the
server starts, so ``base_url`` is known at once and early connections wait in the backlog.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..._serving import EmbeddedServer
from ._app import AppState, create_app
from ._asgi import HoldRegistry
from ._log import RequestLog
from ._plan import ScenarioRunner
from ._scenario import Scenario, load_scenario

ScenarioSource = Scenario | dict[str, Any] | str | Path


class _QuietUpgrades(logging.Filter):
    """WebSocket upgrades are refused on purpose (see ``_app``); uvicorn's warnings are noise."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not (
            message.startswith("Unsupported upgrade request")
            or message.startswith("No supported WebSocket library")
        )


_UPGRADE_FILTER = _QuietUpgrades()


class FakeModelServer(EmbeddedServer):
    """A scripted model server speaking Anthropic, OpenAI (Responses, Chat) and Gemini wire APIs.

    Use ``with FakeModelServer(...) as srv:`` (own thread and loop) or ``async with`` (the current
    loop). ``srv.base_url`` is ``http://127.0.0.1:PORT``; ``srv.requests`` is the request log.
    """

    def __init__(
        self,
        scenario: ScenarioSource | None = None,
        *,
        port: int = 0,
        log_path: str | Path | None = None,
    ) -> None:
        self.runner = ScenarioRunner(
            load_scenario(scenario) if scenario is not None else Scenario()
        )
        self.requests = RequestLog(Path(log_path) if log_path is not None else None)
        self._holds = HoldRegistry()
        super().__init__(create_app(AppState(self.runner, self.requests, self._holds)), port=port)
        logger = logging.getLogger("uvicorn.error")
        if _UPGRADE_FILTER not in logger.filters:
            logger.addFilter(_UPGRADE_FILTER)

    # -- public surface -------------------------------------------------------------------------

    @property
    def scenario(self) -> Scenario:
        return self.runner.scenario

    def set_scenario(self, scenario: ScenarioSource) -> None:
        """Replace the scenario; step use counts and the main-turn counter start again."""
        self.runner.set(load_scenario(scenario))

    def release_holds(self) -> None:
        """End every hold in progress (holds with ``seconds: null`` wait for this)."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._holds.release)

    # -- lifecycle (EmbeddedServer: start/stop, astart/aclose, context managers) ----------------

    label = "fake model server"

    def _before_stop(self) -> None:
        self.release_holds()

    def serve_forever(self, on_ready: Callable[[str], None] | None = None) -> None:  # type: ignore[override]
        """Serve in the calling (main) thread until SIGINT/SIGTERM; ``on_ready(base_url)`` once
        listening (see :meth:`EmbeddedServer.serve_forever`)."""
        super().serve_forever(None if on_ready is None else lambda: on_ready(self.base_url))
