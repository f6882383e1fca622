"""The page's Markdown renderer and transcript, fed hostile agent text, in headless Chromium.

Agent output is untrusted: no markup may pass through, no script may run, links are http(s) only.
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, expect

from .conftest import LiveService

HOSTILE = [
    "<img src=x onerror=\"window.__pwned='img'\">",
    "<script>window.__pwned='script'</script>",
    "[click](javascript:window.__pwned='link')",
    "[data](data:text/html,<script>window.__pwned=1</script>)",
    "**<svg onload=\"window.__pwned='svg'\">**",
    "```html\n<iframe src=javascript:window.__pwned=1></iframe>\n```",
    '> <a href="javascript:window.__pwned=1">quote</a>',
    '- item <b onmouseover="window.__pwned=1">x</b>',
]

RENDER = """async (texts) => {
  const { renderMarkdown } = await import("/static/md.js");
  const out = [];
  for (const t of texts) {
    const el = renderMarkdown(t);
    document.body.append(el);
    out.push({
      tags: [...el.querySelectorAll("*")].map((n) => n.tagName.toLowerCase()),
      hrefs: [...el.querySelectorAll("a")].map((a) => a.getAttribute("href")),
      attrs: [...el.querySelectorAll("*")].flatMap((n) => n.getAttributeNames()),
      text: el.textContent,
    });
  }
  await new Promise((r) => setTimeout(r, 200));
  return { out, pwned: window.__pwned ?? null };
}"""


def _page(context: Any, service: LiveService) -> Page:
    page: Page = context.new_page()
    page.goto(service.url + "/")
    expect(page.locator("body")).to_have_attribute("data-ready", "1")
    return page


def test_hostile_markdown_renders_as_text(context: Any, service: LiveService) -> None:
    page = _page(context, service)
    result = page.evaluate(RENDER, HOSTILE)
    assert result["pwned"] is None
    allowed = {"p", "strong", "em", "code", "pre", "a", "blockquote", "ul", "ol", "li"}
    for text, rendered in zip(HOSTILE, result["out"], strict=True):
        assert set(rendered["tags"]) <= allowed, (text, rendered["tags"])
        assert set(rendered["attrs"]) <= {"href", "rel", "target", "data-lang"}, rendered
        assert all(h is None or h.startswith(("http://", "https://")) for h in rendered["hrefs"])
    # The markup is still there, visibly, as text.
    assert "<img src=x" in result["out"][0]["text"]
    assert "javascript:" in result["out"][2]["text"]


def test_markdown_features_and_safe_links(context: Any, service: LiveService) -> None:
    page = _page(context, service)
    text = (
        "# Title\n\nSome **bold**, *em* and `code`; see [docs](https://example.test/x).\n\n"
        "1. one\n2. two\n\n```py\nprint('hi')\n```\n\nbare https://example.test/y."
    )
    rendered = page.evaluate(RENDER, [text])["out"][0]
    assert {"h3", "strong", "em", "code", "ol", "li", "pre", "a"} <= set(rendered["tags"])
    assert rendered["hrefs"] == ["https://example.test/x", "https://example.test/y"]


def test_a_message_streamed_without_id_and_completed_with_one_is_one_bubble(
    context: Any, service: LiveService
) -> None:
    page = _page(context, service)
    texts = page.evaluate(
        """async () => {
          const { Transcript } = await import("/static/transcript.js");
          const root = document.createElement("div");
          const t = new Transcript(root, {});
          let seq = 0;
          const env = (event) => ({ seq: ++seq, event });
          t.apply(env({ type: "text.delta", text: "Hel" }));
          t.apply(env({ type: "text.delta", text: "lo" }));
          t.apply(env({ type: "text.complete", text: "Hello", message_id: "m1" }));
          t.apply(env({ type: "text.delta", text: "Next", message_id: "m2" }));
          t.apply(env({ type: "text.complete", text: "Next one", message_id: "m2" }));
          return [...root.querySelectorAll(".msg.assistant")].map((m) => m.textContent);
        }"""
    )
    assert texts == ["Hello", "Next one"]


def test_transcript_draws_hostile_events_as_text(context: Any, service: LiveService) -> None:
    page = _page(context, service)
    result = page.evaluate(
        """async (hostile) => {
          const { Transcript } = await import("/static/transcript.js");
          const root = document.createElement("div");
          document.body.append(root);
          const t = new Transcript(root, {});
          let seq = 0;
          const env = (event) => ({ seq: ++seq, ts: "", source: "x", session_id: "s", event });
          t.apply(env({ type: "tool.started", call_id: "c", name: hostile, title: hostile,
                        input: { html: hostile }, kind: "command" }));
          t.apply(env({ type: "tool.completed", call_id: "c", result: { output: hostile } }));
          t.apply(env({ type: "text.complete", text: hostile }));
          t.apply(env({ type: "approval.requested", request_id: hostile, tool_name: hostile,
                        options: [{ id: "o", label: hostile, decision: "allow" }] }));
          t.apply(env({ type: "file.diff", path: hostile, diff: "+" + hostile }));
          t.apply(env({ type: "error", message: hostile }));
          t.apply(env({ type: "text.complete", text: "stale" }));
          t.apply({ seq: 3, event: { type: "text.complete", text: "older" } });
          await new Promise((r) => setTimeout(r, 200));
          return { img: root.querySelectorAll("img, script, svg").length,
                   pwned: window.__pwned ?? null, text: root.textContent, last: t.lastSeq };
        }""",
        HOSTILE[0],
    )
    assert result["img"] == 0 and result["pwned"] is None
    assert HOSTILE[0] in result["text"]
    assert "older" not in result["text"]  # seq 3 after seq 7: dropped (the stale-result rule)
    assert result["last"] == 7
