"""Fixtures for the browser tests: corral's service on a real socket, and headless Chromium.

The browser is Debian's ``chromium`` (installed by ``scripts/setup_browser.sh``), driven by
Playwright from PyPI; Playwright's own browser download is never used. A missing chromium skips
the tests locally and fails them under ``CI=true``, like a missing agent CLI.

The service runs in a thread of the test process with its own event loop, on 127.0.0.1 port 0,
with a temporary ``CORRAL_HOME`` and database; ``restart()`` stops it and starts a new one on the
same database, as a restart of ``corral serve`` would. When the app has a token (the auth scheme
of the service), the browser context gets the ``corral_auth`` cookie.

Screenshots go to ``docs/images/`` when ``CORRAL_SCREENSHOTS=1`` (how the docs' images are made),
otherwise to the test's temporary directory.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette

from corral.server import Settings, create_app

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
START_TIMEOUT = 20.0


class _Server(uvicorn.Server):
    """uvicorn that says when it has started (or given up)."""

    def __init__(self, config: uvicorn.Config, started: threading.Event) -> None:
        super().__init__(config)
        self.started_event = started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().startup(sockets=sockets)
        finally:
            self.started_event.set()


class LiveService:
    """``corral serve`` in a thread: the real app under uvicorn on an ephemeral loopback port."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.db_path = home / "corral.db"
        self.token_value = secrets.token_urlsafe(24)
        self.app: Starlette | None = None
        self.url = ""
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> LiveService:
        # One token for the service's life, across restarts, as `corral serve` keeps its token file.
        app = create_app(Settings(db_path=self.db_path, token=self.token_value))
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        started = threading.Event()
        server = _Server(uvicorn.Config(app, log_level="warning", lifespan="on"), started)

        def run() -> None:
            try:
                asyncio.run(server.serve(sockets=[sock]))
            finally:
                started.set()
                sock.close()

        self._thread = threading.Thread(target=run, name="corral-service", daemon=True)
        self._thread.start()
        if not started.wait(START_TIMEOUT) or not server.started:
            raise RuntimeError("the corral service did not start")
        self.app, self._server = app, server
        return self

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        manager = getattr(self.app.state, "manager", None) if self.app else None
        if manager is not None:
            manager.hub.close()  # end the event streams, as corral serve does on shutdown
        server.should_exit = True
        thread.join(30)
        self._server = self._thread = None
        if thread.is_alive():
            raise RuntimeError("the corral service did not stop within 30 s")

    def restart(self) -> LiveService:
        self.stop()
        return self.start()

    @property
    def token(self) -> str | None:
        return getattr(self.app.state, "token", None) if self.app else None

    @property
    def demo_requests(self) -> list[str]:
        """The latest user text of every main request the demo model received."""
        demo = self.app.state.demo if self.app else None
        server = getattr(demo, "_server", None)
        if server is None:
            return []
        return [r.last_user_text for r in server.requests.main()]

    @property
    def demo_saw_image(self) -> bool:
        """Whether any request the demo model received carried an image."""
        demo = self.app.state.demo if self.app else None
        server = getattr(demo, "_server", None)
        return server is not None and any(r.has_image for r in server.requests.main())

    @property
    def demo_tool_results(self) -> list[str]:
        """Every tool result the demo model was sent, in order."""
        demo = self.app.state.demo if self.app else None
        server = getattr(demo, "_server", None)
        if server is None:
            return []
        return [t for r in server.requests.main() for t in r.tool_results]


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LiveService]:
    home = tmp_path / "corral-home"
    home.mkdir(mode=0o700)
    monkeypatch.setenv("CORRAL_HOME", str(home))
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)  # the demo must need no credentials
    live = LiveService(home).start()
    try:
        yield live
    finally:
        live.stop()


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    # Package scope, not session: Playwright's sync API keeps an event loop marked running in this
    # thread while it is open, and every async test collected after tests/browser would then fail
    # with "Cannot run the event loop while another loop is running".
    if not CHROMIUM.exists():
        message = f"{CHROMIUM} is missing: run scripts/setup_browser.sh"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def context(browser: Any, service: LiveService) -> Iterator[Any]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 860})
    ctx.set_default_timeout(60_000)
    authorize(ctx, service)
    errors: list[str] = []
    ctx.on("weberror", lambda e: errors.append(str(e.error)))
    try:
        yield ctx
    finally:
        ctx.close()
    assert not errors, f"script errors in the page: {errors}"


def authorize(ctx: Any, service: LiveService) -> None:
    """Give the browser the service's ``corral_auth`` cookie when the app has a token."""
    if service.token:
        ctx.add_cookies([{"name": "corral_auth", "value": service.token, "url": service.url}])


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    if os.environ.get("CORRAL_SCREENSHOTS") == "1":
        DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
        return DOCS_IMAGES
    return tmp_path
