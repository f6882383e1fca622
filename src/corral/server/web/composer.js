// The composer: the message draft, @file mentions, image attachments (where the agent has
// image_input), send.
// The draft and its images are saved with the session's view state by the session view.

import { post, toBase64 } from "./api.js";
import { h, clear } from "./dom.js";
import { Mentions } from "./mentions.js";

const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

export function buildComposer(v) {
  v.input = h("textarea", {
    id: "composer-input",
    rows: "3",
    placeholder: "Message the agent. Enter sends, Shift+Enter adds a line.",
  });
  v.input.value = v.view.draft_text || "";
  v.input.addEventListener("input", () => v.saveSoon());
  v.mentions = new Mentions(v.base, v.input);
  v.input.addEventListener("keydown", (e) => {
    if (v.mentions.keydown(e)) return; // picking an @file takes the arrows, Enter and Tab
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      v.submit();
    }
  });
  v.attachments = [...(v.view.draft_attachments || [])];
  v.chips = h("ul", { class: "chips", "aria-label": "Attached images" });
  v.fileInput = h("input", { type: "file", accept: "image/*", multiple: true, id: "attach", class: "visually-hidden" });
  v.fileInput.addEventListener("change", () => v.attach());
  v.attachLabel = h("label", { for: "attach", class: "button" }, "Attach image");
  v.effective = h("p", { class: "effective", id: "effective" });
  v.composerError = h("p", { class: "error-text", role: "alert" });
  v.composer = h(
    "form",
    {
      class: "composer",
      "aria-label": "Composer",
      onsubmit: (e) => {
        e.preventDefault();
        v.submit();
      },
    },
    h("label", { for: "composer-input" }, "Message"),
    h("div", { class: "composer-input" }, v.input, v.mentions.list),
    v.chips,
    h(
      "div",
      { class: "composer-row" },
      v.effective,
      v.fileInput,
      v.attachLabel,
      h("button", { type: "submit", class: "primary" }, "Send"),
    ),
    v.composerError,
  );
  v.renderChips();
}

export async function submit(v) {
  const text = v.input.value;
  if (!text.trim() && !v.attachments.length) return;
  v.composerError.textContent = "";
  try {
    await post(`${v.base}/prompts`, { text, attachments: v.attachments });
    v.input.value = "";
    v.attachments = [];
    v.renderChips();
    v.saveSoon(0);
    v.refreshQueueSoon();
  } catch (e) {
    v.composerError.textContent = `Not sent: ${e.message}`;
  }
}

export async function attach(v) {
  for (const file of v.fileInput.files) {
    if (!file.type.startsWith("image/")) continue;
    if (file.size > MAX_IMAGE_BYTES) {
      v.composerError.textContent = `${file.name} is larger than 5 MB`;
      continue;
    }
    const data = toBase64(await file.arrayBuffer());
    v.attachments.push({ data, media_type: file.type, name: file.name });
  }
  v.fileInput.value = "";
  v.renderChips();
  v.saveSoon();
}

export function renderChips(v) {
  clear(v.chips);
  v.attachments.forEach((a, i) => {
    const img = a.data ? h("img", { src: `data:${a.media_type};base64,${a.data}`, alt: "" }) : null;
    v.chips.append(
      h("li", {}, img, h("span", { text: a.name || a.media_type }),
        h("button", { type: "button", "aria-label": `Remove ${a.name || "image"}`, onclick: () => {
          v.attachments.splice(i, 1);
          v.renderChips();
          v.saveSoon();
        } }, "×")),
    );
  });
}
