// @file mentions in the composer: type "@" and part of a path, pick a project file from the list
// (arrows, Enter or Tab; Escape closes). Suggestions come from the session's project only
// (GET /api/sessions/{id}/files, confined to its cwd on the server).

import { get } from "./api.js";
import { h, clear } from "./dom.js";

const TOKEN = /(^|\s)@([^\s@]{0,200})$/;

export class Mentions {
  constructor(base, input) {
    this.base = base;
    this.input = input;
    this.items = [];
    this.active = -1;
    this.timer = null;
    this.asked = 0;
    this.list = h("ul", { id: "mention-list", class: "mentions", role: "listbox", hidden: true,
      "aria-label": "Files in the project" });
    input.setAttribute("aria-controls", "mention-list");
    input.setAttribute("aria-autocomplete", "list");
    input.setAttribute("aria-expanded", "false");
    input.addEventListener("input", () => this.changed());
    input.addEventListener("blur", () => setTimeout(() => this.close(), 150));
  }

  get open() {
    return !this.list.hidden;
  }

  token() {
    const before = this.input.value.slice(0, this.input.selectionStart ?? this.input.value.length);
    const m = TOKEN.exec(before);
    return m ? m[2] : null;
  }

  changed() {
    const query = this.token();
    clearTimeout(this.timer);
    if (query === null) return this.close();
    this.timer = setTimeout(() => this.ask(query), 120);
  }

  async ask(query) {
    const asked = ++this.asked;
    let result;
    try {
      result = await get(`${this.base}/files?q=${encodeURIComponent(query)}`);
    } catch {
      return this.close();
    }
    if (asked !== this.asked) return; // a newer keystroke asked again
    this.show(result.files || []);
  }

  show(files) {
    this.items = files;
    clear(this.list);
    if (!files.length) return this.close();
    files.forEach((path, i) =>
      this.list.append(
        h("li", {
          id: `mention-${i}`,
          role: "option",
          "aria-selected": "false",
          text: path,
          onmousedown: (e) => {
            e.preventDefault(); // keep the focus in the composer
            this.choose(i);
          },
        }),
      ),
    );
    this.list.hidden = false;
    this.input.setAttribute("aria-expanded", "true");
    this.move(0);
  }

  move(i) {
    const n = this.items.length;
    if (!n) return;
    this.active = (i + n) % n;
    [...this.list.children].forEach((li, k) => li.setAttribute("aria-selected", String(k === this.active)));
    this.input.setAttribute("aria-activedescendant", `mention-${this.active}`);
    this.list.children[this.active]?.scrollIntoView({ block: "nearest" });
  }

  choose(i) {
    const path = this.items[i];
    if (path === undefined) return;
    const caret = this.input.selectionStart ?? this.input.value.length;
    const before = this.input.value.slice(0, caret).replace(TOKEN, (all, space) => `${space}@${path} `);
    this.input.value = before + this.input.value.slice(caret);
    this.input.selectionStart = this.input.selectionEnd = before.length;
    this.close();
    this.input.dispatchEvent(new Event("input")); // the draft is saved like any edit
  }

  close() {
    this.list.hidden = true;
    this.items = [];
    this.active = -1;
    this.input.setAttribute("aria-expanded", "false");
    this.input.removeAttribute("aria-activedescendant");
  }

  /** Handle a key while the list is open; true when the key was used here. */
  keydown(e) {
    if (!this.open) return false;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      this.move(this.active + (e.key === "ArrowDown" ? 1 : -1));
    } else if (e.key === "Enter" || e.key === "Tab") {
      this.choose(this.active);
    } else if (e.key === "Escape") {
      this.close();
    } else {
      return false;
    }
    e.preventDefault();
    return true;
  }
}
