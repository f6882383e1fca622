"""The sidebar's "External sessions" in headless Chromium: a session from Claude Code's recorded
store (``corral record claude store``) is listed, linked with one click (its corral session opens)
and "Continue in terminal" shows the resume command."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from .conftest import LiveService

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts" / "claude"


@pytest.fixture
def claude_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """The recorded store copied into a home of this test; the service process reads it."""
    meta_file = sorted(FIXTURES.glob("*/store.meta.json"))[-1]
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    home = tmp_path / "vendor-home"
    shutil.copytree(meta_file.parent / "store", home)
    for key, value in meta["env"].items():
        if key in ("HOME", "CLAUDE_CONFIG_DIR"):
            monkeypatch.setenv(key, value.replace(str(meta["home"]), str(home)))
    project = Path(meta["cwd"])  # the recorded project path, made to exist for the link
    made = not project.exists()
    project.mkdir(parents=True, exist_ok=True)
    try:
        yield meta
    finally:
        if made:
            project.rmdir()
            if not any(project.parent.iterdir()):
                project.parent.rmdir()


def test_an_external_session_is_linked_and_continued_in_terminal(
    claude_store: dict[str, Any], context: Any, service: LiveService
) -> None:
    page = context.new_page()
    page.goto(service.url + "/")
    title = claude_store["prompts"][0]
    entry = page.locator(".external-nav li", has_text=title)
    expect(entry).to_be_visible()
    entry.get_by_role("button", name="Link claude-code session").click()
    expect(page).to_have_url(re.compile(r"#/s/[0-9a-f]+$"))
    linked = page.locator(".external-nav li", has_text=title)
    linked.get_by_role("button", name="Continue in terminal").click()
    command = linked.locator("code.resume-command")
    expect(command).to_contain_text("--resume")
    expect(command).to_contain_text(f"cd {claude_store['cwd']}")
