"""``ProxyServer``: the proxy on 127.0.0.1, in a thread, on the running loop, or as the process.

The listening socket is bound before uvicorn starts (port 0 = an ephemeral port), so
``base_url`` is known at once. This is the Python API the launcher uses::

    with ProxyServer(ProxySettings(profile=Profile(provider="openai", ...))) as proxy:
        env = {"ANTHROPIC_BASE_URL": proxy.base_url, "ANTHROPIC_API_KEY": proxy.token}
"""

from __future__ import annotations

import gc
import socket
from collections.abc import Callable

from .._serving import EmbeddedServer, _Uvicorn
from ._app import ProxyApp, create_app
from ._config import ProxySettings
from ._providers import check_profile

GC_THRESHOLD = 20_000
"""Young-generation threshold while serving as the process (Python's default is 700)."""


class ProxyServer(EmbeddedServer):
    """The proxy (see the module docstring): ``start()``/``stop()``, ``astart()``/``aclose()``,
    ``with``/``async with``, or ``serve_forever()`` as the process."""

    label = "proxy"
    lifespan = "on"
    backlog = 1024
    use_uvloop = True  # the hot path: uvloop's loop when installed, else asyncio's
    server_header = False

    def __init__(self, settings: ProxySettings) -> None:
        check_profile(settings.profile)
        self.settings = settings
        self.app: ProxyApp
        super().__init__(create_app(settings), host=settings.host, port=settings.port)

    def _make_server(self, on_started: Callable[[], None]) -> tuple[socket.socket, _Uvicorn]:
        sock, server = super()._make_server(on_started)
        # No per-request X-Forwarded-* rewriting (uvicorn's ProxyHeadersMiddleware wraps every
        # call): the proxy binds loopback and reads no client address.
        server.config.proxy_headers = False
        return sock, server

    @property
    def token(self) -> str:
        return self.settings.token

    def serve_forever(self, on_ready: Callable[[ProxyServer], None] | None = None) -> None:  # type: ignore[override]
        """Serve in the calling thread until SIGINT/SIGTERM; ``on_ready(self)`` once listening.

        As the process (``corral proxy serve``), the start-up heap is frozen out of the cyclic
        collector and young collections run less often: each request allocates a few hundred
        short-lived containers, and gc was ~9 % of the proxy's CPU under load (decision 037)."""

        def ready() -> None:
            gc.freeze()
            gc.set_threshold(GC_THRESHOLD, 20, 20)
            if on_ready is not None:
                on_ready(self)

        super().serve_forever(ready)


def start_proxy(settings: ProxySettings) -> ProxyServer:
    """Start a proxy on a background thread; ``.base_url``, ``.token``, ``.stop()``."""
    return ProxyServer(settings).start()
