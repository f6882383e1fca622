// The durable queue as the session view shows it: waiting prompts in order, edit in place, cancel,
// retry. Edits are saved with the prompt's version (a racing delivery makes the save fail, not lose).

import { get, post, patch } from "./api.js";
import { h, clear } from "./dom.js";
import { PROMPT_WORDING } from "./transcript.js";

export function refreshQueueSoon(v) {
  clearTimeout(v.queueTimer);
  v.queueTimer = setTimeout(async () => {
    try {
      v.prompts = await get(`${v.base}/prompts`);
      v.renderQueue();
    } catch {
      /* shown on the next event */
    }
  }, 80);
}

export function renderQueue(v) {
  const waiting = v.prompts.filter((p) => p.state === "queued" || p.state === "sending");
  clear(v.queueList);
  v.queueBox.hidden = waiting.length === 0;
  waiting.forEach((p, i) => v.queueList.append(v.queueItem(p, i + 1)));
  if (v.view.edit_target && !waiting.some((p) => p.id === v.view.edit_target)) {
    v.view.edit_target = null;
    v.saveSoon();
  }
}

export function queueItem(v, p, n) {
  const li = h("li", { class: `queued-prompt state-${p.state}`, dataset: { prompt: p.id } });
  const label = h("span", { class: "badge", text: `${n} · ${PROMPT_WORDING[p.state] || p.state}` });
  if (v.view.edit_target === p.id && p.state === "queued") {
    const key = `corral.edit.${p.id}`;
    const area = h("textarea", { rows: "2", "aria-label": `Edit queued prompt ${n}` });
    area.value = localStorage.getItem(key) ?? p.text;
    area.addEventListener("input", () => localStorage.setItem(key, area.value));
    const err = h("span", { class: "error-text", role: "alert" });
    const save = h("button", { type: "button", class: "primary", onclick: async () => {
      try {
        await patch(`/api/prompts/${encodeURIComponent(p.id)}`, { text: area.value, expected_version: p.version });
        localStorage.removeItem(key);
        v.view.edit_target = null;
        v.saveSoon();
        v.refreshQueueSoon();
      } catch (e) {
        err.textContent = e.status === 409 ? "It changed or was already sent; not saved." : e.message;
      }
    } }, "Save");
    const discard = h("button", { type: "button", onclick: () => {
      localStorage.removeItem(key);
      v.view.edit_target = null;
      v.saveSoon();
      v.renderQueue();
    } }, "Discard edit");
    li.append(label, area, save, discard, err);
    queueMicrotask(() => area.focus());
    return li;
  }
  li.append(label, h("span", { class: "queued-text", text: p.text }));
  if (p.attachments?.length) li.append(h("span", { class: "hint", text: ` (${p.attachments.length} image(s))` }));
  if (p.state === "queued") {
    li.append(
      h("button", { type: "button", onclick: () => {
        v.view.edit_target = p.id;
        v.saveSoon();
        v.renderQueue();
      } }, "Edit"),
      h("button", { type: "button", class: "danger", onclick: () => v.promptAction(p.id, "cancel") }, "Cancel"),
    );
  }
  return li;
}

export async function promptAction(v, pid, action) {
  try {
    await post(`/api/prompts/${encodeURIComponent(pid)}/${action}`);
    v.refreshQueueSoon();
  } catch (e) {
    v.composerError.textContent = `${action} failed: ${e.message}`;
  }
}
