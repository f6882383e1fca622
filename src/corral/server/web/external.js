// The sidebar's "External sessions": sessions started in an agent's own terminal CLI, from the
// agents' stores (GET /api/external-sessions), linkable to corral (docs/handoff.md#flow).
// A linked one opens its corral session; "Continue in terminal" releases it and copies the
// resume command. Text goes in through textContent only (dom.js).

import { get, post } from "./api.js";
import { h, clear } from "./dom.js";

const REFRESH = 15000;
const SHOWN = 12;

const base = (path) => (path || "").split("/").filter(Boolean).pop() || path || "";

export function mountExternalSessions(nav, { navigate }) {
  const list = h("ul", { class: "external-nav", "aria-label": "External sessions" });
  const status = h("p", { class: "hint", role: "status" });
  nav.append(h("h2", { class: "nav-heading", text: "External sessions" }), list, status);
  let timer = null;

  async function linkAndOpen(entry) {
    try {
      const made = await post("/api/handoff/links", { adapter_id: entry.agent_id, sid: entry.sid });
      navigate(`#/s/${made.session.id}`);
      refresh();
    } catch (e) {
      status.textContent = `Could not link: ${e.message}`;
    }
  }

  async function toTerminal(sessionId, out) {
    try {
      const cmd = await post(`/api/sessions/${sessionId}/handoff/terminal`);
      out.textContent = cmd.shell;
      out.hidden = false;
      try {
        await navigator.clipboard.writeText(cmd.shell);
        status.textContent = "Resume command copied; run it in a terminal.";
      } catch {
        status.textContent = "Run the command shown in a terminal.";
      }
    } catch (e) {
      status.textContent = `Could not release the session: ${e.message}`;
    }
  }

  function row(entry, linked) {
    const name = h("span", { class: "nav-name", text: entry.title || entry.sid.slice(0, 12) });
    const where = h("span", { class: "badge", text: `${entry.agent_id} · ${base(entry.cwd)}`, title: entry.cwd || "" });
    const out = h("code", { class: "resume-command", hidden: true });
    if (linked) {
      const open = h("a", { href: `#/s/${linked}` }, name, where);
      const release = h("button", { type: "button", onclick: () => toTerminal(linked, out) }, "Continue in terminal");
      return h("li", {}, open, release, out);
    }
    const link = h("button", { type: "button", onclick: () => linkAndOpen(entry), "aria-label": `Link ${entry.agent_id} session ${entry.sid}` }, "Link");
    return h("li", {}, h("span", { class: "external-entry" }, name, where), link);
  }

  async function refresh() {
    clearTimeout(timer);
    try {
      const [found, links] = await Promise.all([get("/api/external-sessions"), get("/api/handoff/links")]);
      const linked = new Map(links.map((l) => [`${l.adapter_id}:${l.external_sid}`, l.session_id]));
      clear(list);
      for (const entry of (found.sessions || []).slice(0, SHOWN)) {
        list.append(row(entry, linked.get(`${entry.agent_id}:${entry.sid}`)));
      }
      if (!list.firstChild) list.append(h("li", { class: "hint", text: "None found" }));
    } catch (e) {
      if (e.status !== 401) status.textContent = `External sessions unavailable: ${e.message}`;
    }
    timer = setTimeout(refresh, REFRESH);
  }

  refresh();
  return { refresh };
}
