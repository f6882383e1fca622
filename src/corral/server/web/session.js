// The session view: header and controls, transcript (live over SSE), the durable queue, composer.

import { get, post, put } from "./api.js";
import { buildComposer, submit, attach, renderChips } from "./composer.js";
import { h, clear, pretty } from "./dom.js";
import { effortChoice, effortLine } from "./efforts.js";
import { refreshQueueSoon, renderQueue, queueItem, promptAction } from "./queue.js";
import { Transcript, usageText } from "./transcript.js";

const EVENT_TYPES = [
  "session.started", "status", "turn.completed", "session.ended", "text.delta", "text.complete",
  "reasoning.delta", "reasoning.complete", "tool.started", "tool.updated", "tool.completed",
  "tool.failed", "file.diff", "approval.requested", "approval.resolved", "question.asked",
  "question.answered", "plan.updated", "usage", "warning", "error", "unknown",
];
const SAVE_DELAY = 400;
const TAIL_EVENTS = 800;
const OLDER_SLICE = 400;
const OLDER_ITEMS_PER_FRAME = 200;
const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));
const nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));
const TURN_BOUNDARIES = new Set(["turn.completed", "session.ended"]);
const ATTENTION_EVENTS = new Set([
  "approval.requested", "approval.resolved", "question.asked", "question.answered",
  "turn.completed", "session.started", "session.ended",
]);

export class SessionView {
  constructor(sid, { onTitle, announce, onActivity }) {
    this.sid = sid;
    this.onActivity = onActivity;
    this.onTitle = onTitle;
    this.announce = announce;
    this.base = `/api/sessions/${encodeURIComponent(sid)}`;
    this.session = null;
    this.prompts = [];
    this.view = { draft_text: "", draft_attachments: [], edit_target: null, follow: true };
    this.source = null;
    this.saveTimer = null;
    this.queueTimer = null;
    this.refreshTimer = null;
    this.closed = false;
  }

  async mount(main) {
    this.main = main;
    const [detail, view] = await Promise.all([get(this.base), get(`${this.base}/view`)]);
    this.session = detail.session;
    this.prompts = detail.prompts;
    this.view = { ...this.view, ...view };
    // The efforts the agent listed for this model, from the service's cache only (opening a
    // session never starts a second agent); drawn into the composer's effective line.
    get(`/api/adapters/${encodeURIComponent(this.session.adapter_id)}/models?probe=false`)
      .then((list) => { this.modelsList = list; this.renderHeader(); })
      .catch(() => {});
    // A long transcript opens at its tail: the last TAIL_EVENTS events, cut at a turn boundary,
    // are drawn first; the earlier turns are drawn in the background and put above them.
    const from = Math.max(0, (this.session.last_seq || 0) - TAIL_EVENTS);
    let events = await get(`${this.base}/events?after=${from}`);
    let boundary = 0;
    if (from > 0) {
      const cut = events.findIndex((e) => TURN_BOUNDARIES.has(e.event?.type));
      if (cut >= 0) {
        boundary = events[cut].seq;
        events = events.slice(cut + 1);
      } else {
        events = await get(`${this.base}/events`);
      }
    }
    performance.mark("corral:transcript-fetched");
    this.build();
    this.transcript.lastSeq = boundary;
    this.transcript.load(events);
    performance.mark("corral:transcript-drawn");
    this.renderHeader();
    this.renderQueue();
    this.restoreScroll();
    this.connect();
    await nextFrame();
    await nextFrame();
    performance.mark("corral:interactive");
    if (boundary) this.loadOlder(boundary); // after the first paint of the newest turns
  }

  async loadOlder(boundary) {
    let events;
    try {
      events = (await get(`${this.base}/events`)).filter((e) => e.seq <= boundary);
    } catch (e) {
      this.log.before(h("p", { class: "line warning" }, `Earlier turns could not be loaded: ${e.message}`));
      return;
    }
    if (this.closed) return;
    const root = h("div");
    const older = new Transcript(root, {
      onRetry: (pid) => this.promptAction(pid, "retry"),
      onCancelPrompt: (pid) => this.promptAction(pid, "cancel"),
    });
    // Drawn in slices and put on the page a few items per frame: no long task, no jank.
    for (let i = 0; i < events.length; i += OLDER_SLICE) {
      for (const env of events.slice(i, i + OLDER_SLICE)) older.apply(env);
      await nextTask();
      if (this.closed) return;
    }
    const s = this.scroller;
    const shown = h("div", { class: "transcript older", "aria-label": "Earlier turns" });
    s.insertBefore(shown, this.log);
    while (root.lastChild) {
      const slice = document.createDocumentFragment();
      for (let k = 0; k < OLDER_ITEMS_PER_FRAME && root.lastChild; k++) slice.prepend(root.lastChild);
      const fromBottom = s.scrollHeight - s.scrollTop;
      shown.prepend(slice);
      s.scrollTop = s.scrollHeight - fromBottom; // the view does not move
      await nextFrame();
      if (this.closed) return;
    }
    this.olderUsage = older.sessionUsage;
    if (!this.transcript.agent) this.transcript.agent = older.agent;
    if (!this.transcript.model) this.transcript.model = older.model;
    this.renderHeader();
    performance.mark("corral:older-drawn");
  }

  unmount() {
    this.closed = true;
    this.source?.close();
    clearTimeout(this.saveTimer);
    this.flushView();
  }

  // ── layout ──
  build() {
    const m = this.main;
    clear(m);
    this.titleEl = h("h1", { id: "session-title", tabindex: "-1" });
    this.stateEl = h("span", { class: "badge state", id: "session-state" });
    this.metaEl = h("p", { class: "session-meta" });
    this.usageEl = h("p", { class: "session-usage", "aria-label": "Session usage" });
    const btn = (label, onclick, cls = "") => h("button", { type: "button", class: cls, onclick }, label);
    this.controls = {
      stop: btn("Stop", () => this.act("stop", "Stop requested"), ""),
      resume: btn("Resume", () => this.act("resume", "Resumed"), ""),
      status: btn("Status", () => this.queryStatus(), ""),
      repair: btn("Repair", () => this.act("repair", "Readiness re-checked"), ""),
      kill: btn("Kill", () => this.kill(), "danger"),
    };
    this.statusOut = h("div", { class: "status-out", role: "status" });
    const header = h(
      "header",
      { class: "session-header" },
      h("div", { class: "title-row" }, this.titleEl, this.stateEl),
      this.metaEl,
      this.usageEl,
      h("div", { class: "controls", role: "toolbar", "aria-label": "Session controls" },
        Object.values(this.controls)),
      this.statusOut,
    );
    this.log = h("div", {
      class: "transcript",
      role: "log",
      "aria-live": "polite",
      "aria-label": "Transcript",
      tabindex: "0",
    });
    this.transcript = new Transcript(this.log, {
      onApprove: (rid, option) =>
        post(`${this.base}/approvals/${encodeURIComponent(rid)}`, {
          decision: option.decision,
          ...(option.id ? { option_id: option.id } : {}),
        }),
      onAnswer: (rid, answers) =>
        post(`${this.base}/questions/${encodeURIComponent(rid)}`, { answers }),
      onRetry: (pid) => this.promptAction(pid, "retry"),
      onCancelPrompt: (pid) => this.promptAction(pid, "cancel"),
      onUsage: () => this.renderUsage(),
      onAgent: () => this.renderHeader(),
    });
    this.scroller = h("div", { class: "scroller" }, this.log);
    this.scroller.addEventListener("scroll", () => this.onScroll(), { passive: true });
    this.jump = h("button", { type: "button", class: "jump", hidden: true, onclick: () => this.follow(true) },
      "Jump to latest");
    this.queueList = h("ol", { class: "queue-list" });
    this.queueBox = h(
      "section",
      { class: "queue", "aria-labelledby": "queue-title" },
      h("h2", { id: "queue-title" }, "Queue"),
      h("p", { class: "hint" }, "Prompts sent while a turn runs wait here and go out in order."),
      this.queueList,
    );
    this.buildComposer();
    append(m, header, h("div", { class: "session-body" }, this.scroller, this.jump), this.queueBox, this.composer);
  }

  buildComposer() {
    return buildComposer(this);
  }

  // ── header ──
  renderHeader() {
    const s = this.session;
    if (!s) return;
    const info = s.agent_info || {};
    const name = this.transcript.agent?.name || info.name || s.adapter_id;
    this.titleEl.textContent = `${name}`;
    this.stateEl.textContent = s.state;
    this.stateEl.className = `badge state state-${s.state}`;
    this.metaEl.textContent = [
      s.cwd ? `Project ${s.cwd}` : "No project directory",
      s.intent ? `intent ${s.intent}` : null,
      `session ${s.id}`,
    ].filter(Boolean).join(" · ");
    const model = this.transcript.model || s.model || info.model || "adapter default";
    this.effective.textContent = `Model: ${model} · Effort: ${effortLine(s.effort, effortChoice(this.modelsList, s.model || ""))}`;
    const caps = this.capabilities();
    const turning = s.state === "busy" || s.state === "starting";
    this.controls.stop.disabled = !turning || !(caps.interrupt || caps.cancel);
    this.controls.resume.hidden = !["failed", "disconnected"].includes(s.state);
    this.controls.kill.disabled = s.state === "ended";
    const images = Boolean(caps.image_input || caps.images);
    this.attachLabel.hidden = !images;
    this.fileInput.disabled = !images;
    this.onTitle?.(name);
    this.renderUsage();
  }

  capabilities() {
    return this.transcript.agent?.capabilities || this.session?.agent_info?.capabilities || {};
  }

  renderUsage() {
    const total = { ...this.transcript.sessionUsage };
    if (this.olderUsage?.any) {
      total.input += this.olderUsage.input;
      total.output += this.olderUsage.output;
      if (this.olderUsage.cost !== null) total.cost = (total.cost || 0) + this.olderUsage.cost;
      total.any = true;
    }
    const text = usageText(total);
    this.usageEl.textContent = text ? `Session usage: ${text}` : "";
  }

  async refreshSession() {
    clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(async () => {
      try {
        this.session = (await get(this.base)).session;
        this.renderHeader();
      } catch {
        /* the next event retries */
      }
    }, 150);
  }

  // ── live events ──
  connect() {
    this.source?.close();
    const url = `${this.base}/stream?after=${this.transcript.lastSeq}`;
    const source = new EventSource(url, { withCredentials: true });
    const onEvent = (msg) => {
      let env;
      try {
        env = JSON.parse(msg.data);
      } catch {
        return;
      }
      this.receive(env);
    };
    for (const type of EVENT_TYPES) source.addEventListener(type, onEvent);
    source.onerror = () => {
      // EventSource reconnects by itself with Last-Event-ID; a closed one is reopened here.
      if (source.readyState === EventSource.CLOSED && !this.closed) {
        setTimeout(() => !this.closed && this.connect(), 2000);
      }
    };
    this.source = source;
  }

  receive(env) {
    const nearBottom = this.isNearBottom();
    if (!this.transcript.apply(env)) return;
    const ev = env.event || {};
    if (ev.type === "status" && (ev.status || "").startsWith("prompt.")) this.refreshQueueSoon();
    if (["session.started", "turn.completed", "session.ended"].includes(ev.type) ||
        ev.status === "prompt.sending" || ev.status === "disconnected") {
      this.refreshSession();
    }
    if (ATTENTION_EVENTS.has(ev.type) || ev.status === "prompt.sending") this.onActivity?.();
    if (ev.type === "approval.requested") this.announce?.("The agent asks for approval");
    if (ev.type === "question.asked") this.announce?.("The agent asks a question");
    if (this.view.follow && nearBottom) this.scrollToBottom();
    else if (!this.view.follow) this.jump.hidden = false;
  }

  // ── scroll and follow ──
  isNearBottom() {
    const s = this.scroller;
    return s.scrollHeight - s.scrollTop - s.clientHeight < 80;
  }

  scrollToBottom() {
    this.scroller.scrollTop = this.scroller.scrollHeight;
  }

  follow(on) {
    this.view.follow = on;
    this.jump.hidden = on;
    if (on) this.scrollToBottom();
    this.saveSoon();
  }

  onScroll() {
    if (this.restoring) return;
    const follow = this.isNearBottom();
    if (follow !== this.view.follow) {
      this.view.follow = follow;
      this.jump.hidden = follow;
    }
    this.view.scroll_position = this.scroller.scrollTop;
    this.saveSoon();
  }

  restoreScroll() {
    this.restoring = true;
    if (this.view.follow !== false || this.view.scroll_position === null) {
      this.scrollToBottom();
    } else {
      this.scroller.scrollTop = this.view.scroll_position;
      this.jump.hidden = false;
    }
    requestAnimationFrame(() => (this.restoring = false));
  }

  // ── the queue ──
  refreshQueueSoon() {
    return refreshQueueSoon(this);
  }

  renderQueue() {
    return renderQueue(this);
  }

  queueItem(p, n) {
    return queueItem(this, p, n);
  }

  async promptAction(pid, action) {
    return promptAction(this, pid, action);
  }

  // ── composer ──
  async submit() {
    return submit(this);
  }

  async attach() {
    return attach(this);
  }

  renderChips() {
    return renderChips(this);
  }

  // ── draft and view state (server-side, survives reload and restart) ──
  saveSoon(delay = SAVE_DELAY) {
    clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => this.flushView(), delay);
  }

  flushView() {
    if (!this.input) return Promise.resolve();
    const body = {
      draft_text: this.input.value,
      draft_attachments: this.attachments,
      edit_target: this.view.edit_target,
      scroll_position: this.view.scroll_position ?? null,
      follow: this.view.follow !== false,
    };
    // keepalive lets the last save finish while the page unloads; browsers cap it at 64 KB.
    const keepalive = JSON.stringify(body).length < 60_000;
    return put(`${this.base}/view`, body, { keepalive }).catch(() => {});
  }

  // ── controls ──
  async act(action, done) {
    this.statusOut.textContent = "";
    try {
      const result = await post(`${this.base}/${action}`);
      this.statusOut.textContent = done;
      if (action === "repair" && result) this.statusOut.textContent = `${done}: ${result.ok ? "ready" : "not ready"}`;
      this.refreshSession();
    } catch (e) {
      this.statusOut.textContent = `${action} failed: ${e.message}`;
    }
  }

  async kill() {
    if (!window.confirm("Kill this session? The agent process ends and queued prompts are canceled.")) return;
    await this.act("kill", "Killed");
  }

  async queryStatus() {
    clear(this.statusOut);
    try {
      const st = await get(`${this.base}/status`);
      this.session = st.session;
      this.renderHeader();
      const q = Object.entries(st.queue || {}).map(([k, v]) => `${v} ${k}`).join(", ") || "empty";
      this.statusOut.append(
        h("p", {}, `${st.running ? (st.busy ? "Running a turn" : "Running, idle") : "Not running"} · queue: ${q}` +
          ` · ${st.pending_approvals.length} approval(s), ${st.pending_questions.length} question(s) pending`),
        st.adapter_status ? h("details", {}, h("summary", {}, "Agent status"), h("pre", { text: pretty(st.adapter_status) })) : null,
      );
    } catch (e) {
      this.statusOut.textContent = `Status failed: ${e.message}`;
    }
  }
}

function append(el, ...children) {
  for (const c of children) if (c) el.append(c);
}
