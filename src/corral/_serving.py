"""An ASGI app served by uvicorn on a loopback socket: in a thread, on the running loop, or as the
process. The scripted model server and the translating proxy are both one of these.

The listening socket is bound before uvicorn starts (port 0 = an ephemeral port), so ``base_url`` is
known at once and early connections wait in the backlog. Every wait is bounded: start and stop
raise ``TimeoutError`` past :data:`START_TIMEOUT` / :data:`STOP_TIMEOUT`.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import threading
from collections.abc import Callable, Coroutine, Generator
from types import FrameType, TracebackType
from typing import Any, Self

import uvicorn

START_TIMEOUT = 10.0
STOP_TIMEOUT = 10.0


class _Uvicorn(uvicorn.Server):
    """uvicorn, told when it has started, stopped promptly from any thread, and signal handling
    only when we own the process."""

    def __init__(self, config: uvicorn.Config, on_started: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_started = on_started
        self._exit: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        self._exit = asyncio.Event()
        await super().startup(sockets=sockets)
        self._on_started()

    async def main_loop(self) -> None:
        # uvicorn polls should_exit every 0.1 s; waking on an event makes stop() prompt.
        # (Its per-second tick only refreshes the Date header, which is turned off.)
        if not self.should_exit and self._exit is not None:
            await self._exit.wait()

    def request_exit(self) -> None:
        """Stop serving; callable from any thread."""
        self.should_exit = True
        if self._loop is not None and not self._loop.is_closed() and self._exit is not None:
            self._loop.call_soon_threadsafe(self._exit.set)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        self.request_exit()

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        # In-process: never steal the host's SIGINT handler. As a process, ``serve_forever``
        # installs the handlers itself, before it announces the URL.
        yield


def _bind(host: str, port: int, backlog: int) -> socket.socket:
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and
    # without it a keep-alive client waits ~40 ms (Nagle × delayed ACK) per response.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(backlog)
    sock.setblocking(False)
    return sock


def _run_loop(coro: Coroutine[Any, Any, None], *, use_uvloop: bool) -> None:
    if use_uvloop:
        try:
            import uvloop
        except ImportError:
            pass
        else:
            uvloop.run(coro)
            return
    asyncio.run(coro)


class EmbeddedServer:
    """``app`` on ``host:port``; subclasses name themselves and may tune uvicorn (see attributes)."""

    label = "server"
    """Used in thread names and error messages."""
    lifespan: str = "off"
    backlog = 128
    use_uvloop = False
    server_header = True

    def __init__(self, app: Any, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app = app
        self.host = host
        self._requested_port = port
        self._socket: socket.socket | None = None
        self._server: _Uvicorn | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        if self._socket is None:
            raise RuntimeError(f"the {self.label} is not started")
        return int(self._socket.getsockname()[1])

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def _before_stop(self) -> None:
        """Called first when stopping (the scripted model ends its holds here)."""

    def _make_server(self, on_started: Callable[[], None]) -> tuple[socket.socket, _Uvicorn]:
        self._socket = _bind(self.host, self._requested_port, self.backlog)
        config = uvicorn.Config(
            self.app,
            lifespan=self.lifespan,  # type: ignore[arg-type]
            log_config=None,
            log_level="warning",
            access_log=False,
            ws="none",
            date_header=False,
            server_header=self.server_header,
            timeout_graceful_shutdown=2,
        )
        self._server = _Uvicorn(config, on_started)
        return self._socket, self._server

    async def _serve(self, server: _Uvicorn, sock: socket.socket) -> None:
        self._loop = asyncio.get_running_loop()
        await server.serve(sockets=[sock])

    def start(self) -> Self:
        """Serve on a background thread with its own event loop; returns ``self``."""
        started = threading.Event()
        sock, server = self._make_server(started.set)
        self._thread = threading.Thread(
            target=lambda: _run_loop(self._serve(server, sock), use_uvloop=self.use_uvloop),
            name=f"corral-{self.label}",
            daemon=True,
        )
        self._thread.start()
        if not started.wait(START_TIMEOUT):
            self.stop()
            raise TimeoutError(f"the {self.label} did not start within {START_TIMEOUT}s")
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._before_stop()
        self._server.request_exit()
        if self._thread is not None:
            self._thread.join(STOP_TIMEOUT)
            self._thread = None
        self._close()

    async def astart(self) -> Self:
        """Serve on the running event loop; returns ``self``."""
        started = asyncio.Event()
        sock, server = self._make_server(started.set)
        self._task = asyncio.create_task(self._serve(server, sock))
        waiter = asyncio.create_task(started.wait())
        done, _ = await asyncio.wait(
            {waiter, self._task}, timeout=START_TIMEOUT, return_when=asyncio.FIRST_COMPLETED
        )
        waiter.cancel()
        await asyncio.gather(waiter, return_exceptions=True)
        if self._task in done:
            await self._task  # uvicorn gave up during startup: surface its error
            raise RuntimeError(f"the {self.label} stopped during startup")
        if waiter not in done:
            raise TimeoutError(f"the {self.label} did not start within {START_TIMEOUT}s")
        return self

    async def aclose(self) -> None:
        if self._server is None or self._task is None:
            return
        self._before_stop()
        self._server.request_exit()
        await asyncio.wait_for(self._task, STOP_TIMEOUT)
        self._task = None
        self._close()

    def serve_forever(self, on_ready: Callable[[], None] | None = None) -> None:
        """Serve in the calling (main) thread until SIGINT/SIGTERM; ``on_ready()`` once listening.

        The signal handlers go in before the server starts, so a signal sent the moment the URL is
        read still stops it cleanly (unlike uvicorn, the signal is not re-raised: a stop by signal
        is a normal exit).
        """
        sock, server = self._make_server(on_ready or (lambda: None))
        previous = {
            sig: signal.signal(sig, server.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)
        }
        try:
            _run_loop(self._serve(server, sock), use_uvloop=self.use_uvloop)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self._close()

    def _close(self) -> None:
        if self._socket is not None:
            self._socket.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        return await self.astart()

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
