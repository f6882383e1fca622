"""Efforts listed live by the adapter (new-session form, composer, settings) and profiles in the
settings page (a saved profile fills the form, marks a verified adapter stale, and the next launch
re-verifies), in headless Chromium against the pinned real Claude Code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from corral.testing import require_agent

from .conftest import LiveService
from .test_settings import open_settings
from .test_webapp import open_home

pytestmark = [pytest.mark.timeout(300)]


def _api(service: LiveService, method: str, path: str) -> Any:
    headers = {"Authorization": f"Bearer {service.token}", "Content-Type": "application/json"}
    r = httpx.request(method, f"{service.url}{path}", headers=headers, timeout=30)
    r.raise_for_status()
    return r.json()


@pytest.mark.realcli("claude")
def test_efforts_are_the_agents_own_in_form_and_composer(
    context: Any, service: LiveService, tmp_path: Path
) -> None:
    require_agent("claude")
    project = tmp_path / "proj"
    project.mkdir()
    page = open_home(context, service)
    expect(page.locator("#new-adapter option[value='demo.claude-code']")).to_have_count(1)
    page.select_option("#new-adapter", "demo.claude-code")
    expect(page.locator("#effort-hint")).to_contain_text("listed by the agent", timeout=120_000)
    # exactly what the CLI's initialize answer listed for its default model (cached by the
    # service from the form's own request), not a fixed low/medium/high
    listed = _api(service, "GET", "/api/adapters/demo.claude-code/models?probe=false")
    assert listed["live"] is True and listed["takes_effort"] is True
    default = next(e for e in listed["entries"] if e["id"] == "default")
    assert "max" in default["efforts"], default
    options = page.locator("#new-effort option").evaluate_all("os => os.map(o => o.value)")
    assert options == ["", *default["efforts"]]
    expect(page.locator("#new-effort-text")).to_be_hidden()

    page.select_option("#new-effort", "max")
    page.fill("#new-cwd", str(project))
    page.click("button:text('Start session')")
    expect(page.locator("#composer-input")).to_be_visible(timeout=90_000)
    effective = page.locator("#effective")
    expect(effective).to_contain_text("Effort: max · listed: " + ", ".join(default["efforts"]))
    sid = page.url.rsplit("/", 1)[-1]
    assert _api(service, "GET", f"/api/sessions/{sid}")["session"]["effort"] == "max"
    _api(service, "POST", f"/api/sessions/{sid}/kill")

    # where an adapter cannot list efforts, the form says so instead of inventing a list
    page.goto(service.url + "/#/")
    page.select_option("#new-adapter", "codex-exec")
    expect(page.locator("#effort-hint")).to_contain_text("codex exec lists no efforts")
    expect(page.locator("#new-effort-text")).to_be_visible()
    expect(page.locator("#new-effort")).to_be_hidden()
    # and where it takes none at all, the control is off
    page.select_option("#new-adapter", "qwen")
    expect(page.locator("#effort-hint")).to_contain_text("takes no reasoning effort at launch")
    expect(page.locator("#new-effort")).to_be_disabled()


@pytest.mark.realcli("claude")
def test_a_profile_from_settings_fills_the_form_and_goes_stale(
    context: Any, service: LiveService, tmp_path: Path
) -> None:
    require_agent("claude")
    project = tmp_path / "proj"
    project.mkdir()
    page = open_settings(context, service)
    card = page.locator("#settings-claude-code")
    card.locator("button.verify").click()
    expect(card.locator(".verify-state")).to_contain_text("verified", timeout=60_000)
    expect(card.locator(".verify-state")).not_to_contain_text("stale")

    # efforts in the settings come from the agent too: asked for on request
    expect(page.locator("#defaults-claude-code-effort-text")).to_be_visible()  # nothing cached
    card.locator("button.list-efforts").click()
    expect(page.locator("#defaults-claude-code-effort option[value='max']")).to_have_count(
        1, timeout=120_000
    )
    page.fill("#defaults-claude-code-model", "sonnet")
    page.select_option("#defaults-claude-code-effort", "xhigh")
    card.locator("form.defaults button[type=submit]").click()
    expect(card.locator("form.defaults [role=status]")).to_have_text("Saved.")
    # the profile changed: the verification no longer vouches for it
    expect(card.locator(".verify-state")).to_contain_text("stale")
    view = _api(service, "GET", "/api/settings")
    assert view["adapter_defaults"]["claude-code"] == {
        "model": "sonnet",
        "effort": "xhigh",
        "intent": None,
    }
    state = next(v for v in view["verification"] if v["adapter_id"] == "claude-code")
    assert state["stale"] is True
    assert (service.home / "state" / "profiles.json").exists()

    page.click("a.brand")
    page.select_option("#new-adapter", "claude-code")
    expect(page.locator("#new-model")).to_have_value("sonnet")
    expect(page.locator("#new-effort")).to_have_value("xhigh", timeout=120_000)
    page.fill("#new-cwd", str(project))
    page.click("button:text('Start session')")
    expect(page.locator("#composer-input")).to_be_visible(timeout=90_000)
    sid = page.url.rsplit("/", 1)[-1]
    session = _api(service, "GET", f"/api/sessions/{sid}")["session"]
    assert (session["model"], session["effort"]) == ("sonnet", "xhigh")
    # this launch re-verified first: the adapter is verified again for the new profile
    view = _api(service, "GET", "/api/settings")
    state = next(v for v in view["verification"] if v["adapter_id"] == "claude-code")
    assert state["stale"] is False and state["ok"] is True
    _api(service, "POST", f"/api/sessions/{sid}/kill")
