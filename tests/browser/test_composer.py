"""The composer's @file mentions: completed from the session's project, chosen by keyboard."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import expect

from .conftest import LiveService


def test_file_mentions_complete_inside_the_project(
    context: Any, service: LiveService, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    (project / "docs").mkdir(parents=True)
    (project / "README.md").write_text("# hi\n")
    (project / "docs" / "guide.md").write_text("# guide\n")
    (tmp_path / "outside.md").write_text("not in the project\n")
    (project / "outside-link.md").symlink_to(tmp_path / "outside.md")
    auth = {"Authorization": f"Bearer {service.token}"}
    created = httpx.post(
        f"{service.url}/api/sessions",
        json={"adapter_id": "claude-code", "cwd": str(project), "start": False},
        headers=auth,
    )
    created.raise_for_status()
    sid = created.json()["id"]

    page = context.new_page()
    page.goto(f"{service.url}/#/s/{sid}")
    box = page.locator("#composer-input")
    box.click()
    box.press_sequentially("read @md")
    options = page.locator("#mention-list [role='option']")
    expect(options).to_have_text(["README.md", "docs/guide.md"])  # no symlink out of the project
    expect(box).to_have_attribute("aria-expanded", "true")
    page.keyboard.press("ArrowDown")
    expect(options.nth(1)).to_have_attribute("aria-selected", "true")
    page.keyboard.press("Enter")  # chooses the file; does not send the prompt
    expect(box).to_have_value("read @docs/guide.md ")
    expect(page.locator("#mention-list")).to_be_hidden()
    prompts = httpx.get(f"{service.url}/api/sessions/{sid}/prompts", headers=auth).json()
    assert prompts == []
    box.press_sequentially("@nothing-matches")
    expect(page.locator("#mention-list")).to_be_hidden()


def test_edit_target_and_unsaved_edit_survive_reload(
    context: Any, service: LiveService, tmp_path: Path
) -> None:
    """A session that is not running keeps its prompts queued: edit one across a reload."""
    auth = {"Authorization": f"Bearer {service.token}"}
    sid = httpx.post(
        f"{service.url}/api/sessions",
        json={"adapter_id": "claude-code", "start": False},
        headers=auth,
    ).json()["id"]
    for text in ("first waiting", "second waiting"):
        r = httpx.post(
            f"{service.url}/api/sessions/{sid}/prompts", json={"text": text}, headers=auth
        )
        r.raise_for_status()

    page = context.new_page()
    page.goto(f"{service.url}/#/s/{sid}")
    queue = page.locator(".queue-list li")
    expect(queue).to_have_count(2)
    page.fill("#composer-input", "a separate new message")
    queue.nth(0).locator("button:text('Edit')").click()
    page.locator(".queue-list textarea").fill("first, edited but not saved yet")
    page.wait_for_timeout(900)  # the view state (edit target, draft) is saved 400 ms later

    page.reload()
    area = page.locator(".queue-list textarea")
    expect(area).to_have_value("first, edited but not saved yet")  # edit target and its text
    expect(page.locator("#composer-input")).to_have_value("a separate new message")
    page.locator(".queue-list button:text('Save')").click()
    expect(queue.nth(0)).to_contain_text("first, edited but not saved yet")
    queue.nth(1).locator("button:text('Cancel')").click()
    expect(queue).to_have_count(1)
    canceled = page.locator(".msg.user[data-state='canceled']")
    expect(canceled).to_contain_text("second waiting")
    records = httpx.get(f"{service.url}/api/sessions/{sid}/prompts", headers=auth).json()
    assert [(p["text"], p["state"], p["version"]) for p in records] == [
        ("first, edited but not saved yet", "queued", 2),
        ("second waiting", "canceled", 1),
    ]


def test_new_session_form_remembers_choices_per_adapter(context: Any, service: LiveService) -> None:
    """The form prefills an adapter's defaults from the service settings (not this browser)."""
    auth = {"Authorization": f"Bearer {service.token}"}
    r = httpx.put(
        f"{service.url}/api/settings/adapters/codex/defaults",
        json={"model": "gpt-x", "effort": "high", "intent": "review"},
        headers=auth,
    )
    assert r.status_code == 200, r.text
    page = context.new_page()
    page.goto(service.url + "/")
    expect(page.locator("body")).to_have_attribute("data-ready", "1")
    expect(page.locator("#new-adapter option[value='claude-code']")).to_have_count(1)
    page.select_option("#new-adapter", "codex")
    expect(page.locator("#new-model")).to_have_value("gpt-x")
    # gpt-x is no model the agent lists, so its effort is not chosen from a list: typed
    expect(page.locator("#new-effort-text")).to_have_value("high")
    expect(page.locator("#new-intent")).to_have_value("review")
    page.select_option("#new-adapter", "claude-code")
    expect(page.locator("#new-model")).to_have_value("")
