// The event board: agents and tasks with their live line, and the timeline of completed events.
// Every string from the server goes in through textContent; nothing is parsed as HTML.

const KINDS = ["session", "end", "idle", "edit", "read", "search", "command", "test", "check",
  "git", "plan", "subagent", "web", "other"];
const MAX_TIMELINE = 1000;

const sessions = new Map(); // session id -> {agent, task, status, live, last, count}
const timeline = []; // completed events, oldest first
const seen = { agent: new Set(), task: new Set() };
const filters = { agent: "", task: "", kind: "" };
let lastId = 0;

const $ = (id) => document.getElementById(id);

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function matches(ev) {
  return (!filters.agent || ev.agent === filters.agent)
    && (!filters.task || ev.task === filters.task)
    && (!filters.kind || ev.kind === filters.kind);
}

function addOption(name, value) {
  if (!value || seen[name].has(value)) return;
  seen[name].add(value);
  const select = document.querySelector(`select[name="${name}"]`);
  select.append(new Option(value, value));
}

function apply(ev) {
  if (typeof ev !== "object" || ev === null || typeof ev.id !== "number") return;
  if (ev.id <= lastId) return;
  lastId = ev.id;
  addOption("agent", ev.agent);
  addOption("task", ev.task);
  const s = sessions.get(ev.session) || { agent: null, task: null, status: "active", live: null, count: 0 };
  s.agent = ev.agent || s.agent;
  s.task = ev.task || s.task;
  s.last = ev.ts;
  if (ev.running === true) {
    s.live = ev;
  } else {
    s.live = null;
    s.count += 1;
    s.status = ev.kind === "end" ? "ended" : ev.kind === "idle" ? "idle" : "active";
    timeline.push(ev);
    if (timeline.length > MAX_TIMELINE) timeline.shift();
  }
  sessions.set(ev.session, s);
}

function shortTime(ts) {
  const d = new Date(ts);
  return Number.isNaN(d.getTime()) ? "" : d.toLocaleTimeString();
}

function renderSessions() {
  const list = $("sessions");
  const items = [];
  for (const [id, s] of sessions) {
    if (filters.agent && s.agent !== filters.agent) continue;
    if (filters.task && s.task !== filters.task) continue;
    const li = el("li", "session");
    li.dataset.session = id;
    li.append(el("div", "who", s.agent || `session ${id.slice(0, 8)}`));
    li.append(el("div", "meta", `${s.task ? `task ${s.task} · ` : ""}${s.count} events`));
    li.append(el("div", "state", s.status));
    const live = el("div", "live", s.live ? `▶ ${s.live.kind}: ${s.live.summary}` : "");
    live.dataset.running = s.live ? "true" : "false";
    li.append(live);
    items.push(li);
  }
  list.replaceChildren(...items.reverse());
}

function renderTimeline() {
  const items = [];
  for (let i = timeline.length - 1; i >= 0; i -= 1) {
    const ev = timeline[i];
    if (!matches(ev)) continue;
    const li = el("li", ev.ok === undefined ? "" : `ok-${ev.ok}`);
    li.dataset.id = String(ev.id);
    li.dataset.kind = ev.kind;
    const time = el("time", "", shortTime(ev.ts));
    time.dateTime = String(ev.ts);
    li.append(time, el("span", "kind", ev.kind));
    const body = el("span", "summary", ev.summary);
    body.title = [ev.agent, ev.task, ev.file, ev.cmd, ev.detail].filter(Boolean).join("\n");
    li.append(body);
    items.push(li);
  }
  $("timeline").replaceChildren(...items);
}

let scheduled = false;
function render() {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(() => {
    scheduled = false;
    renderSessions();
    renderTimeline();
  });
}

function setStatus(state, text) {
  const status = $("status");
  status.dataset.state = state;
  status.textContent = text;
}

async function load() {
  const response = await fetch("/api/events?limit=500", {
    credentials: "same-origin",
    headers: { "Content-Type": "application/json" },
  });
  if (!response.ok) throw new Error(`GET /api/events: ${response.status}`);
  const body = await response.json();
  for (const ev of body.events || []) apply(ev);
  lastId = Math.max(lastId, Number(body.last_id) || 0);
  render();
}

function follow() {
  const source = new EventSource(`/api/events/stream?after=${lastId}`);
  source.addEventListener("open", () => setStatus("live", "live"));
  source.addEventListener("error", () => setStatus("down", "reconnecting…"));
  source.addEventListener("board", (message) => {
    let ev;
    try { ev = JSON.parse(message.data); } catch { return; }
    apply(ev);
    render();
  });
  source.addEventListener("missed", (message) => {
    let info = {};
    try { info = JSON.parse(message.data); } catch { /* keep the generic notice */ }
    $("notice").textContent = `fell behind after event ${info.after ?? "?"}; replaying to ${info.latest ?? "?"}`;
  });
}

function setupFilters() {
  const kind = document.querySelector('select[name="kind"]');
  for (const k of KINDS) kind.append(new Option(k, k));
  $("filters").addEventListener("change", (e) => {
    const target = e.target;
    if (target instanceof HTMLSelectElement && target.name in filters) {
      filters[target.name] = target.value;
      render();
    }
  });
}

setupFilters();
load().catch((err) => setStatus("down", String(err.message || err))).finally(follow);
