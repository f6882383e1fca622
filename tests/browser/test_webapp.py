"""The web app in headless Chromium, against the pinned real CLIs driven by the scripted model.

Every session here uses the demo provider (``demo.<adapter>``): the real Claude Code / Codex CLI,
redirected to corral's scripted model, with no credentials in the environment. What the page
shows is checked against ground truth: the file on disk, the prompt records of the API and the
requests the scripted model received.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from corral.testing import require_agent

from .conftest import LiveService, authorize

pytestmark = [pytest.mark.timeout(300)]

claude = pytest.mark.realcli("claude")

# A 1×1 PNG, for the composer's image attachment.
PNG = {
    "name": "dot.png",
    "mimeType": "image/png",
    "buffer": bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360f80f00000101000518d84e0000000049454e44ae426082"
    ),
}


def open_home(context: Any, service: LiveService) -> Page:
    page: Page = context.new_page()
    page.goto(service.url + "/")
    expect(page.locator("body")).to_have_attribute("data-ready", "1")
    return page


def start_session(
    page: Page, adapter_id: str, project: Path | None, *, intent: str | None = None
) -> str:
    """Start a session from the new-session form (``intent``: an option value, ``""`` for
    "Approve each action"); returns its id."""
    expect(page.locator(f"#new-adapter option[value='{adapter_id}']")).to_have_count(1)
    page.select_option("#new-adapter", adapter_id)
    # The form asks the agent for its models with a short-lived instance of the same CLI; let it
    # finish first (two OpenCode servers starting at once on one demo home can collide).
    expect(page.locator("#model-hint")).not_to_contain_text("Asking", timeout=120_000)
    if intent is not None:
        page.select_option("#new-intent", intent)
    if project is not None:
        page.fill("#new-cwd", str(project))
    page.click("button:text('Start session')")
    expect(page.locator("#composer-input")).to_be_visible(timeout=90_000)
    match = re.search(r"#/s/([A-Za-z0-9._-]+)$", page.url)
    assert match, page.url
    return match.group(1)


def send(page: Page, text: str) -> None:
    page.fill("#composer-input", text)
    page.keyboard.press("Enter")
    expect(page.locator("#composer-input")).to_have_value("")


def turns_finished(page: Page, n: int, timeout: float = 120_000) -> None:
    expect(page.locator(".transcript .line.turn-end")).to_have_count(n, timeout=timeout)


def prompts(service: LiveService, sid: str) -> list[dict[str, Any]]:
    response = httpx.get(
        f"{service.url}/api/sessions/{sid}/prompts",
        headers={"Authorization": f"Bearer {service.token}"},
    )
    response.raise_for_status()
    result: list[dict[str, Any]] = response.json()
    return result


@pytest.fixture
def project(tmp_path: Path) -> Path:
    directory = tmp_path / "project"
    directory.mkdir()
    (directory / "README.md").write_text("# a project for the browser tests\n")
    return directory


@claude
def test_first_run_and_demo_session_with_no_credentials(
    context: Any, service: LiveService, shots: Path
) -> None:
    require_agent("claude")
    require_agent("codex")
    page = open_home(context, service)
    row = page.locator("tr[data-adapter='claude-code']")
    expect(row).to_contain_text("installed")
    expect(row).to_contain_text("2.")  # the pinned version is shown
    expect(page.locator(".demo-callout")).to_contain_text("demo provider")
    page.screenshot(path=str(shots / "webapp-first-run.png"), full_page=True)

    page.click("#start-demo")
    expect(page.locator("#composer-input")).to_be_visible(timeout=90_000)
    send(page, "hello from the browser")
    # Streamed text arrives while the turn runs, then the turn ends with its usage.
    expect(page.locator(".msg.assistant").first).to_contain_text("demo provider", timeout=90_000)
    turns_finished(page, 1)
    expect(page.locator(".line.turn-end")).to_contain_text("tokens")
    expect(page.locator(".msg.user").first).to_contain_text("hello from the browser")
    # One bubble per prompt: its queued/sending/delivered states are not drawn as lines.
    expect(page.locator(".msg.user")).to_have_count(1)
    assert any("hello from the browser" in r for r in service.demo_requests)

    # An image attached in the composer reaches the model (Claude Code has image_input).
    page.set_input_files("#attach", files=[PNG])
    expect(page.locator(".chips li")).to_contain_text("dot.png")
    send(page, "what is in this picture?")
    turns_finished(page, 2)
    expect(page.locator(".chips li")).to_have_count(0)
    assert service.demo_saw_image


@claude
def test_approve_and_deny_action_cards(
    context: Any, service: LiveService, project: Path, shots: Path
) -> None:
    require_agent("claude")
    require_agent("codex")
    page = open_home(context, service)
    # Under the work intent Claude Code edits without asking; cards are for the agent's own
    # approvals, which "Approve each action" (no intent) keeps.
    start_session(page, "demo.claude-code", project, intent="")
    target = project / "hello.txt"

    send(page, "please write a file")
    card = page.locator(".card.approval").nth(0)
    expect(card).to_contain_text("Approval needed", timeout=90_000)
    expect(card.locator("button")).not_to_have_count(0)
    page.screenshot(path=str(shots / "webapp-approval.png"))
    # Attention: a pending approval is counted in the title.
    expect(page).to_have_title(re.compile(r"^\(1\) "), timeout=15_000)
    # Keyboard only: focus the choice and press Enter.
    card.locator("button[data-decision='deny']").focus()
    page.keyboard.press("Enter")
    expect(card).to_contain_text("Denied")
    turns_finished(page, 1)
    assert not target.exists(), "the file changed although the approval was denied"

    send(page, "write the file again")
    card = page.locator(".card.approval").nth(1)
    expect(card).to_contain_text("Approval needed", timeout=90_000)
    assert not target.exists()
    card.locator("button[data-decision='allow']").first.click()
    expect(card).to_contain_text("Allowed")
    turns_finished(page, 2)
    assert target.read_text() == "hello from the corral demo\n"
    diff = page.locator("figure.diff").last
    expect(diff).to_contain_text("hello.txt")
    expect(diff.locator(".dl.add")).to_contain_text("hello from the corral demo")
    page.locator(".line.turn-end").last.scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "webapp-session.png"))
    page.locator("details.tool").last.locator("summary").click()
    expect(page.locator("details.tool").last.locator(".tool-input")).to_contain_text("hello.txt")


@claude
def test_answer_a_question(context: Any, service: LiveService, project: Path) -> None:
    require_agent("claude")
    require_agent("codex")
    page = open_home(context, service)
    start_session(page, "demo.claude-code", project)
    send(page, "ask me a question")
    card = page.locator(".card.question")
    expect(card).to_contain_text("Which color should the demo use?", timeout=90_000)
    card.locator("input[value='blue']").focus()  # keyboard only: choose, then submit
    page.keyboard.press("Space")
    expect(card.locator("input[value='blue']")).to_be_checked()
    card.locator("button:text('Answer')").focus()
    page.keyboard.press("Enter")
    expect(card).to_contain_text("Answered: blue")
    turns_finished(page, 1)
    expect(page.locator(".msg.assistant").last).to_contain_text("Done")
    assert any("blue" in t for t in service.demo_tool_results), service.demo_tool_results


@claude
def test_queue_edit_cancel_reload_keeps_draft_and_queue(
    context: Any, service: LiveService, project: Path, shots: Path
) -> None:
    require_agent("claude")
    require_agent("codex")
    page = open_home(context, service)
    sid = start_session(page, "demo.claude-code", project)
    send(page, "go slow please")
    expect(page.locator(".msg.assistant").first).to_contain_text("slowly", timeout=90_000)
    send(page, "queued one")
    send(page, "queued two")
    queue = page.locator(".queue-list li")
    expect(queue).to_have_count(2)
    expect(queue.nth(0)).to_contain_text("queued one")
    page.screenshot(path=str(shots / "webapp-queue.png"))

    queue.nth(0).locator("button:text('Edit')").click()
    page.locator(".queue-list textarea").fill("queued one, edited")
    page.locator(".queue-list button:text('Save')").click()
    expect(queue.nth(0)).to_contain_text("queued one, edited")
    queue.nth(1).locator("button:text('Cancel')").click()
    expect(queue).to_have_count(1)
    page.fill("#composer-input", "an unsent draft")
    page.set_input_files("#attach", files=[PNG])
    expect(page.locator(".chips li")).to_have_count(1)
    page.wait_for_timeout(900)  # the draft is saved 400 ms after the last change

    page.reload()
    expect(page.locator("#composer-input")).to_have_value("an unsent draft")
    expect(page.locator(".chips li")).to_contain_text("dot.png")  # the draft's image too
    states = {p["text"]: p["state"] for p in prompts(service, sid)}
    if states["queued one, edited"] == "queued":  # still waiting: the reloaded page shows it
        expect(page.locator(".queue-list li")).to_contain_text("queued one, edited")
    turns_finished(page, 2, timeout=150_000)
    canceled = page.locator(".msg.user[data-state='canceled']")
    expect(canceled).to_contain_text("queued two")
    expect(canceled).to_contain_text("Canceled: never sent.")
    final = {p["text"]: p["state"] for p in prompts(service, sid)}
    assert final == {
        "go slow please": "delivered",
        "queued one, edited": "delivered",
        "queued two": "canceled",
    }
    received = service.demo_requests
    assert not any("queued two" in r for r in received)
    order = [
        i
        for t in ("go slow please", "queued one, edited")
        for i, r in enumerate(received)
        if t in r
    ]
    assert order == sorted(order) and len(order) >= 2, received
    expect(page.locator("#composer-input")).to_have_value("an unsent draft")


@claude
def test_second_tab_and_server_restart(
    browser: Any, context: Any, service: LiveService, project: Path
) -> None:
    require_agent("claude")
    require_agent("codex")
    page = open_home(context, service)
    sid = start_session(page, "demo.claude-code", project)
    other = context.new_page()
    other.goto(f"{service.url}/#/s/{sid}")
    expect(other.locator("#composer-input")).to_be_visible()
    send(page, "hello both tabs")
    for tab in (page, other):
        expect(tab.locator(".msg.assistant").first).to_contain_text("demo provider", timeout=90_000)
        turns_finished(tab, 1)
    # textContent: a tab in the background skips layout, so its innerText would be partial.
    texts = [tab.locator(".transcript").text_content() for tab in (page, other)]
    assert texts[0] == texts[1]

    service.restart()
    ctx = browser.new_context(viewport={"width": 1280, "height": 860})
    try:
        authorize(ctx, service)
        fresh = ctx.new_page()
        fresh.goto(service.url + "/")
        link = fresh.locator(f"a[href='#/s/{sid}']").first
        expect(link).to_contain_text("disconnected")
        link.click()
        expect(fresh.locator(".msg.user")).to_contain_text("hello both tabs")
        fresh.locator("button:text('Resume')").click()
        expect(fresh.locator("#session-state")).to_have_text("idle", timeout=90_000)
        send(fresh, "after the restart")
        turns_finished(fresh, 2)
        expect(fresh.locator(".msg.user")).to_have_count(2)
    finally:
        ctx.close()


@pytest.mark.parametrize(
    ("agent", "adapter_id"),
    [
        pytest.param("codex", "demo.codex", marks=pytest.mark.realcli("codex")),
        pytest.param("opencode", "demo.opencode", marks=pytest.mark.realcli("opencode")),
    ],
)
def test_other_agent_demo_streams_text_and_writes_a_file(
    context: Any, service: LiveService, project: Path, agent: str, adapter_id: str
) -> None:
    require_agent(agent)
    page = open_home(context, service)
    # The demo writes through the agent's own tools; with no intent its approvals come to the page.
    start_session(page, adapter_id, project, intent="")
    send(page, f"hello {agent}")
    expect(page.locator(".msg.assistant").first).to_contain_text("demo provider", timeout=120_000)
    turns_finished(page, 1)
    send(page, "write a file")
    card = page.locator(".card.approval")
    target = project / "hello.txt"
    finished = page.locator(".transcript .line.turn-end")
    expect(card.or_(finished.nth(1))).not_to_have_count(0, timeout=120_000)
    if card.count():
        card.first.locator("button[data-decision='allow']").first.click()
    turns_finished(page, 2)
    assert target.read_text() == "hello from the corral demo\n"


@pytest.mark.realcli("opencode")
def test_approve_and_deny_on_opencode(context: Any, service: LiveService, project: Path) -> None:
    """The other agent's cards: OpenCode asks before its write under "Approve each action"; a
    denied write leaves the file alone, an allowed one writes it (checked on disk)."""
    require_agent("opencode")
    page = open_home(context, service)
    start_session(page, "demo.opencode", project, intent="")
    target = project / "hello.txt"
    send(page, "please write a file")
    card = page.locator(".card.approval").nth(0)
    expect(card).to_contain_text("Approval needed", timeout=120_000)
    card.locator("button[data-decision='deny']").first.click()
    expect(card).to_contain_text("Denied")
    turns_finished(page, 1)
    assert not target.exists(), "the file changed although the approval was denied"

    send(page, "write the file again")
    card = page.locator(".card.approval").nth(1)
    expect(card).to_contain_text("Approval needed", timeout=120_000)
    assert not target.exists()
    card.locator("button[data-decision='allow']").first.click()
    expect(card).to_contain_text("Allowed")
    turns_finished(page, 2)
    assert target.read_text() == "hello from the corral demo\n"


def test_login_link_signs_the_page_in(browser: Any, service: LiveService) -> None:
    """Without the cookie the page says how to sign in; the one-time link gives the cookie."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 860})
    try:
        page = ctx.new_page()
        page.goto(service.url + "/")
        expect(page.locator("#banner")).to_contain_text("Not signed in")
        response = httpx.post(
            f"{service.url}/api/auth/codes",
            headers={
                "Authorization": f"Bearer {service.token}",
                "Content-Type": "application/json",
            },
            json={},
        )
        response.raise_for_status()
        page.goto(response.json()["url"])
        expect(page.locator("body")).to_have_attribute("data-ready", "1")
        expect(page.locator("tr[data-adapter='claude-code']")).to_have_count(1)
        expect(page.locator("#banner")).to_be_hidden()
        cookies = {c["name"]: c for c in ctx.cookies()}
        assert cookies["corral_auth"]["httpOnly"] is True
    finally:
        ctx.close()


@claude
def test_stop_status_and_kill_controls(context: Any, service: LiveService, project: Path) -> None:
    require_agent("claude")
    require_agent("codex")
    page = open_home(context, service)
    start_session(page, "demo.claude-code", project)
    send(page, "go slow please")
    expect(page.locator(".msg.assistant").first).to_contain_text("slowly", timeout=90_000)
    expect(page.locator("button:text('Stop')")).to_be_enabled()
    page.click("button:text('Stop')")
    expect(page.locator(".line.turn-end")).to_contain_text("Turn stopped", timeout=60_000)
    page.click("button:text('Status')")
    expect(page.locator(".status-out")).to_contain_text("Running, idle")
    expect(page.locator(".status-out")).to_contain_text("queue:")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("button:text('Kill')")
    expect(page.locator(".line.session-end")).to_contain_text("Session killed")
    expect(page.locator("#session-state")).to_have_text("ended")


@pytest.mark.realcli("opencode")
def test_new_session_form_lists_models_live(context: Any, service: LiveService) -> None:
    """OpenCode and Claude Code report their models: the form offers them (the demo model among
    OpenCode's, Claude's own aliases from its initialize answer); codex exec says why it cannot."""
    require_agent("opencode")
    require_agent("claude")
    require_agent("codex")
    page = open_home(context, service)
    expect(page.locator("#new-adapter option[value='demo.opencode']")).to_have_count(1)
    page.select_option("#new-adapter", "demo.opencode")
    expect(page.locator("#model-hint")).to_contain_text("listed by the agent", timeout=120_000)
    expect(page.locator("#model-list option[value='corral/corral-demo']")).to_have_count(1)
    page.select_option("#new-adapter", "demo.claude-code")
    expect(page.locator("#model-hint")).to_contain_text("listed by the agent", timeout=120_000)
    expect(page.locator("#model-list option[value='sonnet']")).to_have_count(1)
    page.select_option("#new-adapter", "codex-exec")
    expect(page.locator("#model-hint")).to_contain_text("does not list its models (codex exec")


NOTIFICATION_SPY = """
window.__notes = [];
window.__hidden = false;
Object.defineProperty(document, "hidden", { get: () => window.__hidden });
class SpyNotification {
  static permission = "granted";
  static requestPermission() { return Promise.resolve("granted"); }
  constructor(title, options) { window.__notes.push({ title, body: options && options.body }); }
}
window.Notification = SpyNotification;
"""


@claude
def test_opt_in_notification_when_the_tab_is_hidden(
    context: Any, service: LiveService, project: Path
) -> None:
    """With notifications on and the tab hidden, a question in a session raises one."""
    require_agent("claude")
    require_agent("codex")
    context.add_init_script(NOTIFICATION_SPY)
    page = open_home(context, service)
    page.check("#notify")
    sid = start_session(page, "demo.claude-code", project)
    page.goto(service.url + "/#/")  # back to the list: the session is watched from there
    expect(page.locator(f"tr[data-session='{sid}']")).to_have_count(1)
    page.evaluate("window.__hidden = true")
    headers = {"Authorization": f"Bearer {service.token}"}
    httpx.post(
        f"{service.url}/api/sessions/{sid}/prompts", json={"text": "ask me"}, headers=headers
    ).raise_for_status()
    # (wait_for_function would eval a string in the page, which its CSP refuses: poll instead)
    deadline = time.monotonic() + 90
    while not page.evaluate("window.__notes.length") and time.monotonic() < deadline:
        page.wait_for_timeout(250)
    notes = page.evaluate("window.__notes")
    assert notes, "no notification was raised"
    assert notes[0]["title"].startswith("corral: Claude Code") and "Question" in notes[0]["body"]
    expect(page.locator(f"tr[data-session='{sid}']")).to_have_attribute(
        "data-attention", "question"
    )
    expect(page).to_have_title(re.compile(r"^\(1\) corral"))
