"""The settings page in headless Chromium: the webhook (only http(s), then a real POST to a
loopback receiver), conformance results for the installed version, verify, and defaults that
the new-session form then offers."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from corral import agents
from corral.testing.conformance import Outcome, ScenarioResult
from corral.testing.conformance._results import save_results

from .conftest import LiveService


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    bodies: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            bodies.append(json.loads(raw))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", bodies
    finally:
        server.shutdown()
        server.server_close()


def open_settings(context: Any, service: LiveService) -> Page:
    page: Page = context.new_page()
    page.goto(service.url + "/#/settings")
    expect(page.locator("body")).to_have_attribute("data-ready", "1")
    expect(page.locator("h1")).to_have_text("Settings")
    return page


def test_settings_page(
    context: Any, service: LiveService, receiver: tuple[str, list[dict[str, Any]]], shots: Path
) -> None:
    url, bodies = receiver
    claude = next(s for s in agents.status() if s.name == "claude")
    version = claude.installed or "9.9.9"
    save_results(
        [
            ScenarioResult(agent="claude", scenario="text", outcome=Outcome.PASS),
            ScenarioResult(
                agent="claude", scenario="question", outcome=Outcome.UNSUPPORTED, reason="nope"
            ),
        ],
        versions={"claude": version},
        adapters={"claude": "claude-code"},
    )
    page = open_settings(context, service)

    # the webhook: refused when not http(s), saved when it is
    page.fill("#webhook-url", "ftp://example.invalid/x")
    page.click("#webhook-save")
    expect(page.locator("#webhook-status")).to_contain_text("Not saved")
    page.fill("#webhook-url", url)
    page.click("#webhook-save")
    expect(page.locator("#webhook-status")).to_contain_text("0 sent, 0 failed")

    # conformance results recorded for this version, read-only
    card = page.locator("#settings-claude-code")
    summary = card.locator("details.conformance summary")
    expect(summary).to_contain_text(f"({version},")
    expect(summary).to_contain_text("1 pass, 1 unsupported")
    summary.click()
    expect(card.locator("tr.outcome-unsupported")).to_contain_text("nope")
    expect(page.locator("#settings-codex .conformance.none")).to_contain_text("no run recorded")
    page.screenshot(path=str(shots / "webapp-settings.png"))

    # verify an adapter now (cat stays up: it verifies)
    cat = page.locator("#settings-example-plain-stdin")
    expect(cat.locator(".verify-state")).to_have_text("never verified")
    cat.locator("button.verify").click()
    expect(cat.locator(".verify-state")).to_contain_text("verified", timeout=30_000)
    expect(cat.locator(".verify-state")).not_to_contain_text("never")

    # defaults: saved on the service, offered by the new-session form
    page.fill("#defaults-claude-code-model", "sonnet")
    card.locator("button.list-efforts").click()  # the efforts Claude Code lists for sonnet
    expect(page.locator("#defaults-claude-code-effort option[value='high']")).to_have_count(
        1, timeout=120_000
    )
    page.select_option("#defaults-claude-code-effort", "high")
    card.locator("form.defaults button[type=submit]").click()
    expect(card.locator("form.defaults [role=status]")).to_have_text("Saved.")
    page.click("a.brand")  # back to the start page
    expect(page.locator("#new-adapter option[value='claude-code']")).to_have_count(1)
    page.select_option("#new-adapter", "claude-code")
    expect(page.locator("#new-model")).to_have_value("sonnet")
    expect(page.locator("#new-effort")).to_have_value("high", timeout=120_000)

    auth = {"Authorization": f"Bearer {service.token}"}
    view = httpx.get(f"{service.url}/api/settings", headers=auth).json()
    assert view["webhook_url"] == url
    assert view["adapter_defaults"]["claude-code"] == {
        "model": "sonnet",
        "effort": "high",
        "intent": None,
    }
    assert bodies == []  # nothing needed the user yet
    expect(page.locator("#nav-settings")).to_have_attribute("href", "#/settings")
