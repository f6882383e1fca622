"""Running the app under uvicorn, ending event streams first when the server shuts down.

uvicorn waits for open requests before running the lifespan shutdown, and an SSE observer never
finishes on its own; so on shutdown the observers are told to close before uvicorn waits.
"""

from __future__ import annotations

import socket

import uvicorn
from starlette.applications import Starlette

GRACEFUL_SHUTDOWN = 5


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, app: Starlette) -> None:
        super().__init__(config)
        self.corral_app = app

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        manager = getattr(self.corral_app.state, "manager", None)
        if manager is not None:
            manager.hub.close()
        board = getattr(self.corral_app.state, "board", None)
        if board is not None:
            board.fanout.close()
        await super().shutdown(sockets)


def run_server(app: Starlette, *, host: str, port: int) -> None:
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN,
    )
    _Server(config, app).run()
