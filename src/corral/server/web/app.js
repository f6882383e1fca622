// corral's web app: a router over two views, the session overview poll, title and notifications.

import { get } from "./api.js";
import { h, clear } from "./dom.js";
import { HomeView, effectiveAttention, ATTENTION_WORDS } from "./home.js";
import { SessionView } from "./session.js";
import { SettingsView } from "./settings.js";
import { mountExternalSessions } from "./external.js";

const POLL_VISIBLE = 2500;
const POLL_HIDDEN = 6000;

const main = document.getElementById("main");
const sidebar = document.getElementById("session-nav");
const live = document.getElementById("announcer");
const notifyToggle = document.getElementById("notify");
const banner = document.getElementById("banner");
mountExternalSessions(sidebar.parentElement, { navigate: (hash) => navigate(hash) });

let overview = [];
let view = null;
let currentSid = null;
let pageTitle = "corral";
const notified = new Map();

const seen = (sid) => Number(localStorage.getItem(`corral.seen.${sid}`) || 0);
const markSeen = (sid, seq) => seq > seen(sid) && localStorage.setItem(`corral.seen.${sid}`, String(seq));

function announce(text) {
  live.textContent = "";
  setTimeout(() => (live.textContent = text), 30);
}

function navigate(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

async function route() {
  const m = /^#\/s\/([A-Za-z0-9._-]+)$/.exec(location.hash);
  view?.unmount();
  view = null;
  clear(main);
  banner.hidden = true;
  if (location.hash === "#/settings") {
    currentSid = null;
    pageTitle = "settings";
    view = new SettingsView();
    await view.mount(main);
    main.querySelector("h1")?.focus();
  } else if (m) {
    currentSid = m[1];
    pageTitle = "session";
    const v = new SessionView(currentSid, {
      onTitle: (name) => {
        pageTitle = name;
        updateTitle();
      },
      announce,
      onActivity: refreshSoon,
    });
    view = v;
    try {
      await v.mount(main);
      main.querySelector("h1")?.focus();
    } catch (e) {
      main.append(h("p", { class: "error-text", role: "alert" }, `Could not open the session: ${e.message}`),
        h("a", { href: "#/" }, "Back to sessions"));
    }
  } else {
    currentSid = null;
    pageTitle = "corral";
    const v = new HomeView({ overview: () => overview, seen, navigate });
    view = v;
    await v.mount(main);
    main.querySelector("h1")?.focus();
  }
  renderSidebar();
  updateTitle();
}

function renderSidebar() {
  clear(sidebar);
  for (const o of overview) {
    const s = o.session;
    const att = effectiveAttention(o, s.id === currentSid ? Infinity : seen(s.id));
    const link = h("a", { href: `#/s/${s.id}`, "aria-current": s.id === currentSid ? "page" : null },
      h("span", { class: "nav-name", text: s.agent_info?.name || s.adapter_id }),
      h("span", { class: `badge state state-${s.state}`, text: s.state }),
      att ? h("span", { class: `badge attention att-${att}`, text: ATTENTION_WORDS[att] }) : null);
    sidebar.append(h("li", {}, link));
  }
  if (!overview.length) sidebar.append(h("li", { class: "hint" }, "No sessions yet"));
}

function attentionCount() {
  return overview.filter((o) => effectiveAttention(o, o.session.id === currentSid ? Infinity : seen(o.session.id))).length;
}

function updateTitle() {
  const n = attentionCount();
  document.title = `${n ? `(${n}) ` : ""}${pageTitle}${pageTitle === "corral" ? "" : " · corral"}`;
}

function maybeNotify(o, att) {
  const key = `${att}:${o.last_turn_seq}:${o.pending_approvals}:${o.pending_questions}`;
  if (notified.get(o.session.id) === key) return;
  notified.set(o.session.id, key);
  if (!document.hidden || !notifyToggle.checked || Notification.permission !== "granted") return;
  const name = o.session.agent_info?.name || o.session.adapter_id;
  const n = new Notification(`corral: ${name}`, { body: ATTENTION_WORDS[att], tag: o.session.id });
  n.onclick = () => {
    window.focus();
    navigate(`#/s/${o.session.id}`);
  };
}

let pollTimer = null;

/** Poll again soon: a view saw something change (a card, a turn end) the list should show. */
function refreshSoon() {
  clearTimeout(pollTimer);
  pollTimer = setTimeout(poll, 150);
}

async function poll() {
  clearTimeout(pollTimer);
  try {
    overview = await get("/api/overview");
    banner.hidden = true;
  } catch (e) {
    if (e.status !== 401) {
      banner.textContent = `corral is not answering: ${e.message}`;
      banner.hidden = false;
    }
  }
  for (const o of overview) {
    if (o.session.id === currentSid) markSeen(o.session.id, o.last_turn_seq);
    const att = effectiveAttention(o, o.session.id === currentSid ? Infinity : seen(o.session.id));
    if (att) maybeNotify(o, att);
  }
  renderSidebar();
  updateTitle();
  view?.update?.(overview);
  clearTimeout(pollTimer);
  pollTimer = setTimeout(poll, document.hidden ? POLL_HIDDEN : POLL_VISIBLE);
}

document.addEventListener("corral:unauthorized", () => {
  banner.textContent =
    "Not signed in. Open the login link that `corral serve` printed (or run `corral serve --open`).";
  banner.hidden = false;
});

if ("Notification" in window) {
  notifyToggle.checked = localStorage.getItem("corral.notify") === "1" && Notification.permission === "granted";
  notifyToggle.addEventListener("change", async () => {
    if (notifyToggle.checked && Notification.permission !== "granted") {
      notifyToggle.checked = (await Notification.requestPermission()) === "granted";
    }
    localStorage.setItem("corral.notify", notifyToggle.checked ? "1" : "0");
  });
} else {
  notifyToggle.closest("label").hidden = true;
}

window.addEventListener("hashchange", route);
window.addEventListener("beforeunload", () => view?.unmount());
window.corral = { ready: false };
route().finally(() => {
  window.corral.ready = true;
  document.body.dataset.ready = "1";
  poll(); // after the first view: its requests go first
});
