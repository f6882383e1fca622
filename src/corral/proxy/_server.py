"""``ProxyServer``: the proxy on 127.0.0.1, in a thread, on the running loop, or as the process.

The listening socket is bound before uvicorn starts (port 0 = an ephemeral port), so
``base_url`` is known at once. This is the Python API the launcher uses::

    with ProxyServer(ProxySettings(profile=Profile(provider="openai", ...))) as proxy:
        env = {"ANTHROPIC_BASE_URL": proxy.base_url, "ANTHROPIC_API_KEY": proxy.token}
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import threading
from collections.abc import Callable, Generator
from types import FrameType, TracebackType
from typing import Any

import uvicorn

from ._app import ProxyApp, create_app
from ._config import ProxySettings
from ._providers import check_profile

_START_TIMEOUT = 10.0


def _run(coro: Any) -> None:
    """Run ``coro`` on a fresh loop: uvloop's when installed (the proxy's hot path), else asyncio's."""
    try:
        import uvloop
    except ImportError:
        asyncio.run(coro)
        return
    uvloop.run(coro)


_STOP_TIMEOUT = 10.0


class _Uvicorn(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, on_started: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_started = on_started
        self._exit_event: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        self._exit_event = asyncio.Event()
        await super().startup(sockets=sockets)
        self._on_started()

    async def main_loop(self) -> None:
        if not self.should_exit and self._exit_event is not None:
            await self._exit_event.wait()

    def request_exit(self) -> None:
        self.should_exit = True
        if self._loop is not None and not self._loop.is_closed() and self._exit_event is not None:
            self._loop.call_soon_threadsafe(self._exit_event.set)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        self.request_exit()

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


class ProxyServer:
    def __init__(self, settings: ProxySettings) -> None:
        check_profile(settings.profile)
        self.settings = settings
        self.app: ProxyApp = create_app(settings)
        self._socket: socket.socket | None = None
        self._server: _Uvicorn | None = None
        self._thread: threading.Thread | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        if self._socket is None:
            raise RuntimeError("the proxy is not started")
        return int(self._socket.getsockname()[1])

    @property
    def base_url(self) -> str:
        return f"http://{self.settings.host}:{self.port}"

    @property
    def token(self) -> str:
        return self.settings.token

    def _bind(self) -> socket.socket:
        # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets whose proto says TCP,
        # and without it a keep-alive client waits ~40 ms (Nagle × delayed ACK) per response.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((self.settings.host, self.settings.port))
        sock.listen(1024)
        sock.setblocking(False)
        self._socket = sock
        return sock

    def _make_server(self, on_started: Callable[[], None]) -> _Uvicorn:
        config = uvicorn.Config(
            self.app,
            lifespan="on",
            log_config=None,
            log_level="warning",
            access_log=False,
            ws="none",
            date_header=False,
            server_header=False,
            timeout_graceful_shutdown=2,
        )
        self._server = _Uvicorn(config, on_started)
        return self._server

    def start(self) -> ProxyServer:
        """Serve on a background thread with its own event loop."""
        sock = self._bind()
        started = threading.Event()
        server = self._make_server(started.set)
        self._thread = threading.Thread(
            target=lambda: _run(server.serve(sockets=[sock])),
            name="corral-proxy",
            daemon=True,
        )
        self._thread.start()
        if not started.wait(_START_TIMEOUT):
            self.stop()
            raise TimeoutError(f"the proxy did not start within {_START_TIMEOUT}s")
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.request_exit()
        if self._thread is not None:
            self._thread.join(_STOP_TIMEOUT)
            self._thread = None
        self._close()

    async def astart(self) -> ProxyServer:
        """Serve on the running event loop."""
        sock = self._bind()
        started = asyncio.Event()
        server = self._make_server(started.set)
        self._task = asyncio.create_task(server.serve(sockets=[sock]))
        waiter = asyncio.create_task(started.wait())
        done, _ = await asyncio.wait(
            {waiter, self._task}, timeout=_START_TIMEOUT, return_when=asyncio.FIRST_COMPLETED
        )
        waiter.cancel()
        await asyncio.gather(waiter, return_exceptions=True)
        if self._task in done:
            await self._task
            raise RuntimeError("the proxy stopped during startup")
        if waiter not in done:
            raise TimeoutError(f"the proxy did not start within {_START_TIMEOUT}s")
        return self

    async def aclose(self) -> None:
        if self._server is None or self._task is None:
            return
        self._server.request_exit()
        await asyncio.wait_for(self._task, _STOP_TIMEOUT)
        self._task = None
        self._close()

    def serve_forever(self, on_ready: Callable[[ProxyServer], None] | None = None) -> None:
        """Serve in the calling thread until SIGINT/SIGTERM; ``on_ready(self)`` once listening."""
        sock = self._bind()
        server = self._make_server(lambda: on_ready(self) if on_ready else None)
        previous = {
            sig: signal.signal(sig, server.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)
        }
        try:
            _run(server.serve(sockets=[sock]))
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self._close()

    def _close(self) -> None:
        if self._socket is not None:
            self._socket.close()

    def __enter__(self) -> ProxyServer:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> ProxyServer:
        return await self.astart()

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


def start_proxy(settings: ProxySettings) -> ProxyServer:
    """Start a proxy on a background thread; ``.base_url``, ``.token``, ``.stop()``."""
    return ProxyServer(settings).start()
