"""The board page in headless Chromium: events POSTed to the service appear live.

Debian's chromium driven by Playwright (never Playwright's own browser download). Missing
chromium or Playwright skips locally and fails under ``CI=true``.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from server.conftest import AUTH, TOKEN

from corral.server import Settings, create_app

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _require_browser() -> Any:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        reason = "playwright is not installed (pip install -e '.[dev]')"
    else:
        if CHROMIUM.exists():
            return sync_playwright
        reason = f"{CHROMIUM} is missing (scripts/setup_browser.sh)"
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture
def service(tmp_path: Path) -> Iterator[str]:
    app = create_app(Settings(db_path=tmp_path / "corral.db", token=TOKEN))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        app.state.board.fanout.close()
        server.should_exit = True
        thread.join(15)
        sock.close()


def post(url: str, **fields: Any) -> None:
    event = {"v": 1, "session": "sess-1", "agent": "agent-1", "task": "07-hello", **fields}
    response = httpx.post(f"{url}/api/events", json=event, headers=AUTH, timeout=5)
    assert response.status_code == 201, response.text


@pytest.mark.timeout(90)
def test_events_arrive_live_on_the_board_page(service: str) -> None:
    sync_playwright = _require_browser()
    from playwright.sync_api import expect

    post(service, kind="session", summary="claude session started")  # before the page loads
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            context = browser.new_context()
            # The page authenticates with the login cookie (docs/security.md).
            context.add_cookies([{"name": "corral_auth", "value": TOKEN, "url": service}])
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(f"{service}/board")
            page.wait_for_selector('#status[data-state="live"]', timeout=15_000)
            session = page.locator('li.session[data-session="sess-1"]')
            assert session.locator(".who").text_content() == "agent-1"

            post(service, kind="edit", summary="Write hello.txt", file="hello.txt", running=True)
            live = session.locator(".live")
            # A selector wait, not wait_for_function: the page's CSP forbids eval, which a
            # polling JS predicate would need.
            page.wait_for_selector(
                '.live[data-running="true"]:has-text("Write hello.txt")', timeout=10_000
            )
            assert live.text_content() == "▶ edit: Write hello.txt"

            post(service, kind="edit", summary="Write hello.txt", file="hello.txt", ok=True)
            post(service, kind="idle", summary="finished responding")
            post(service, kind="other", summary='<img src=x onerror="window.pwned=1">', ok=False)
            page.wait_for_selector('#timeline li[data-kind="other"]', timeout=10_000)
            assert live.get_attribute("data-running") == "false"
            kinds = page.eval_on_selector_all("#timeline li", "els => els.map(e => e.dataset.kind)")
            assert kinds == ["other", "idle", "edit", "session"]  # newest first, no running line
            assert session.locator(".state").text_content() == "active"
            # Untrusted text is text: no element was made from it, nothing ran.
            assert page.locator("#timeline img").count() == 0
            assert page.evaluate("window.pwned") is None

            # Locator assertions poll from the driver; a JS predicate would need eval (CSP).
            rows = page.locator("#timeline li")
            page.select_option('select[name="kind"]', "idle")
            expect(rows).to_have_count(1, timeout=5_000)
            expect(rows.first).to_have_attribute("data-kind", "idle")
            page.select_option('select[name="agent"]', "agent-1")
            page.select_option('select[name="kind"]', "")
            expect(rows).to_have_count(4, timeout=5_000)
            page.select_option('select[name="task"]', "07-hello")
            page.select_option('select[name="kind"]', "edit")
            expect(rows).to_have_count(1, timeout=5_000)
            expect(rows.first).to_have_attribute("data-kind", "edit")
            assert errors == []
        finally:
            browser.close()
