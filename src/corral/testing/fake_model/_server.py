"""``FakeModelServer``: the scripted model server, in-process (thread or event loop) or as a process.

One uvicorn server on 127.0.0.1. The listening socket is bound (port 0 = a free port) before the
server starts, so ``base_url`` is known at once and early connections wait in the backlog.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import threading
from collections.abc import Callable, Generator
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

import uvicorn

from ._app import AppState, create_app
from ._asgi import HoldRegistry
from ._log import RequestLog
from ._plan import ScenarioRunner
from ._scenario import Scenario, load_scenario

ScenarioSource = Scenario | dict[str, Any] | str | Path

_START_TIMEOUT = 10.0
_STOP_TIMEOUT = 10.0


class _QuietUpgrades(logging.Filter):
    """WebSocket upgrades are refused on purpose (see ``_app``); uvicorn's warnings are noise."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not (
            message.startswith("Unsupported upgrade request")
            or message.startswith("No supported WebSocket library")
        )


_UPGRADE_FILTER = _QuietUpgrades()


class _Uvicorn(uvicorn.Server):
    """uvicorn, told when it has started, and signal handling only when we own the process."""

    def __init__(self, config: uvicorn.Config, on_started: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_started = on_started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        self._exit = asyncio.Event()
        await super().startup(sockets=sockets)
        self._on_started()

    async def main_loop(self) -> None:
        # uvicorn polls should_exit every 0.1 s; waking on an event makes stop() prompt.
        # (Its per-second tick only refreshes the Date header, which is turned off.)
        if not self.should_exit:
            await self._exit.wait()

    def request_exit(self) -> None:
        """Stop serving; callable from any thread."""
        self.should_exit = True
        loop = getattr(self, "_loop", None)
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._exit.set)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        self.request_exit()

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        # In-process: never steal the test runner's SIGINT handler. As a process,
        # ``serve_forever`` installs the handlers itself, before it announces the URL.
        yield


class FakeModelServer:
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
        self.app = create_app(AppState(self.runner, self.requests, self._holds))
        self._requested_port = port
        self._socket: socket.socket | None = None
        self._server: _Uvicorn | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._task: asyncio.Task[None] | None = None

    # -- public surface -------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._socket is None:
            raise RuntimeError("the fake model server is not started")
        return int(self._socket.getsockname()[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

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

    # -- lifecycle ------------------------------------------------------------------------------

    def _bind(self) -> socket.socket:
        # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets whose proto says TCP,
        # and without it a keep-alive client waits ~40 ms (Nagle × delayed ACK) per response.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind(("127.0.0.1", self._requested_port))
        sock.listen(128)
        sock.setblocking(False)
        self._socket = sock
        return sock

    def _make_server(self, on_started: Callable[[], None]) -> _Uvicorn:
        config = uvicorn.Config(
            self.app,
            lifespan="off",
            log_config=None,
            log_level="warning",
            access_log=False,
            ws="none",
            date_header=False,
            timeout_graceful_shutdown=2,
        )
        logger = logging.getLogger("uvicorn.error")
        if _UPGRADE_FILTER not in logger.filters:
            logger.addFilter(_UPGRADE_FILTER)
        self._server = _Uvicorn(config, on_started)
        return self._server

    def start(self) -> FakeModelServer:
        """Serve on a background thread with its own event loop."""
        sock = self._bind()
        started = threading.Event()
        server = self._make_server(on_started=started.set)

        def run() -> None:
            async def main() -> None:
                self._loop = asyncio.get_running_loop()
                await server.serve(sockets=[sock])

            asyncio.run(main())

        self._thread = threading.Thread(target=run, name="fake-model-server", daemon=True)
        self._thread.start()
        if not started.wait(_START_TIMEOUT):
            raise TimeoutError(f"fake model server did not start within {_START_TIMEOUT}s")
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self.release_holds()
        self._server.request_exit()
        if self._thread is not None:
            self._thread.join(_STOP_TIMEOUT)
            self._thread = None
        self._close_socket()

    async def astart(self) -> FakeModelServer:
        """Serve on the running event loop."""
        sock = self._bind()
        started = asyncio.Event()
        server = self._make_server(on_started=started.set)
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.create_task(server.serve(sockets=[sock]))
        waiter = asyncio.create_task(started.wait())
        done, _ = await asyncio.wait(
            {waiter, self._task}, timeout=_START_TIMEOUT, return_when=asyncio.FIRST_COMPLETED
        )
        waiter.cancel()
        if self._task in done:
            await self._task  # uvicorn gave up during startup: surface its error
            raise RuntimeError("the fake model server stopped during startup")
        if waiter not in done:
            raise TimeoutError(f"fake model server did not start within {_START_TIMEOUT}s")
        return self

    async def aclose(self) -> None:
        if self._server is None or self._task is None:
            return
        self._holds.release()
        self._server.request_exit()
        await asyncio.wait_for(self._task, _STOP_TIMEOUT)
        self._task = None
        self._close_socket()

    def serve_forever(self, on_ready: Callable[[str], None] | None = None) -> None:
        """Serve in the calling (main) thread until SIGINT/SIGTERM; ``on_ready(base_url)`` first.

        The signal handlers go in before the URL is announced, so a signal sent the moment the
        URL is read still stops the server cleanly (unlike uvicorn, the signal is not re-raised:
        a stop by signal is a normal exit).
        """
        sock = self._bind()
        server = self._make_server(on_started=lambda: None)
        previous = {
            sig: signal.signal(sig, server.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)
        }
        try:
            if on_ready is not None:
                on_ready(self.base_url)

            async def main() -> None:
                self._loop = asyncio.get_running_loop()
                await server.serve(sockets=[sock])

            asyncio.run(main())
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self._close_socket()

    def _close_socket(self) -> None:
        if self._socket is not None:
            self._socket.close()

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> FakeModelServer:
        return await self.astart()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
