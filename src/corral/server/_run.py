"""Running the app under uvicorn, ending event streams first when the server shuts down.

uvicorn waits for open requests before running the lifespan shutdown, and an SSE observer never
finishes on its own; so on shutdown the observers are told to close before uvicorn waits.

:func:`bind` opens the listening socket first, so the caller knows the real port (``--port 0``)
and can print it before serving; connections that arrive meanwhile wait in the backlog.
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


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (IPv6 when ``host`` is an IPv6 address)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def base_url(sock: socket.socket) -> str:
    """The URL a browser on this machine uses for ``sock`` (a wildcard address → loopback)."""
    host, port = sock.getsockname()[:2]
    if host in ("0.0.0.0", ""):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def run_server(app: Starlette, *, host: str, port: int, sock: socket.socket | None = None) -> None:
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN,
    )
    server = _Server(config, app)
    if sock is None:
        server.run()
    else:
        try:
            server.run(sockets=[sock])
        finally:
            sock.close()
