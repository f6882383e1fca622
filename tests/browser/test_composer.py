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
