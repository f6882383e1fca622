"""Running the app under uvicorn, ending event streams first when the server shuts down.

uvicorn waits for open requests before running the lifespan shutdown, and an SSE observer never
finishes on its own; so on shutdown the observers are told to close before uvicorn waits.

:func:`bind` opens the listening socket first, so the caller knows the real port (``--port 0``)
and can print it before serving; connections that arrive meanwhile wait in the backlog.
"""

from __future__ import annotations

import gc
import socket
import sys

import uvicorn
from starlette.applications import Starlette

GRACEFUL_SHUTDOWN = 5
SWITCH_INTERVAL = 0.001
"""Seconds a thread may keep the GIL while another waits for it (Python's default is 0.005).
The database writer thread releases the GIL around every SQLite call and must win it back from
the busy event loop each time; at 5 ms a batch of a few dozen calls took a large part of a second
under load (decision 040)."""
GC_THRESHOLD = (50_000, 20, 10)
"""The cyclic collector's thresholds in ``corral serve`` (Python's default is (700, 10, 10)). With
the default, the youngest generation was collected every 700 allocations and survivors promoted so
often that a full collection ran six times in a 500-session load, each a pause of the event loop
of 100–230 ms: those pauses were the loop's p99 (decision 046). Reference counting frees the
garbage that has no cycles at once; the threshold only delays the cyclic kind."""


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
    sys.setswitchinterval(SWITCH_INTERVAL)
    gc.collect()
    gc.freeze()  # what start-up made lives as long as the process: no collection scans it again
    gc.set_threshold(*GC_THRESHOLD)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN,
        # corral serves loopback clients directly, never behind a proxy: no X-Forwarded-* rewrite
        # of the client's address (one middleware less on every request and every SSE send).
        proxy_headers=False,
    )
    server = _Server(config, app)
    if sock is None:
        server.run()
    else:
        try:
            server.run(sockets=[sock])
        finally:
            sock.close()
