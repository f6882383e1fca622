// One session's transcript: envelopes (seq-ordered) → DOM, incrementally.
//
// Rules shared with the terminal views: assistant text apart from reasoning (collapsed); a tool
// call is one collapsible item whose input and output stay inspectable; diffs are drawn; a prompt
// appears once, when it is sent, and its delivery state is a badge on it (never a line per state);
// approvals and questions are action cards that stay pending until answered, denied, cancelled or
// the session ends; events with nothing to show draw nothing.

import { drawApprovalCard, drawQuestionCard } from "./cards.js";
import { h, clear, pretty, formatCost } from "./dom.js";
import { renderMarkdown } from "./md.js";

export const PROMPT_WORDING = {
  queued: "Queued",
  sending: "Sending…",
  delivered: "Delivered",
  failed: "Failed: the agent did not accept this prompt. You can retry it.",
  canceled: "Canceled: never sent.",
  indeterminate:
    "Indeterminate: corral stopped after the agent may have received this prompt, before its " +
    "delivery was recorded. It is never replayed automatically; choose Retry only after checking " +
    "the conversation for a duplicate.",
};

const QUIET_STATUS = new Set([
  "busy",
  "idle",
  "running",
  "ready",
  "commands",
  "session_info",
  "context",
  "requesting",
]);

const DECISION_WORDS = {
  allow: "Allowed",
  allow_always: "Allowed (always)",
  deny: "Denied",
  cancel: "Cancelled",
};

const TURN_WORDS = {
  end_turn: "Turn finished",
  cancelled: "Turn stopped",
  max_tokens: "Turn ended: output limit reached",
  max_turns: "Turn ended: step limit reached",
  refusal: "Turn ended: the model refused",
  error: "Turn failed",
};

const END_WORDS = {
  completed: "Session ended",
  cancelled: "Session stopped",
  failed: "Session failed",
  killed: "Session killed",
};

function emptyUsage() {
  return { input: 0, output: 0, cost: null, any: false };
}

function addUsage(into, ev) {
  into.input += ev.input_tokens || 0;
  into.output += ev.output_tokens || 0;
  if (typeof ev.cost_usd === "number") into.cost = (into.cost || 0) + ev.cost_usd;
  into.any = true;
}

export function usageText(u) {
  if (!u.any) return "";
  const parts = [`${u.input.toLocaleString()} in / ${u.output.toLocaleString()} out tokens`];
  if (u.cost !== null) parts.push(formatCost(u.cost));
  return parts.join(" · ");
}

export class Transcript {
  constructor(root, handlers = {}) {
    this.root = root;
    this.handlers = handlers;
    this.lastSeq = 0;
    this.texts = new Map();
    this.tools = new Map();
    this.prompts = new Map();
    this.cards = new Map();
    this.openText = null;
    this.openReasoning = null;
    this.plan = null;
    this.turnUsage = emptyUsage();
    this.sessionUsage = emptyUsage();
    this.agent = null;
    this.model = null;
  }

  /** Apply every envelope of a stored transcript at once, off-document. */
  load(envelopes) {
    const parent = this.root.parentNode;
    const next = this.root.nextSibling;
    if (parent) parent.removeChild(this.root);
    try {
      for (const env of envelopes) this.apply(env);
    } finally {
      if (parent) parent.insertBefore(this.root, next);
    }
  }

  /** Apply one envelope; returns false for a stale one (seq ≤ the last applied). */
  apply(env) {
    if (!env || typeof env.seq !== "number" || env.seq <= this.lastSeq) return false;
    this.lastSeq = env.seq;
    const ev = env.event || {};
    try {
      this.draw(ev, env);
    } catch (err) {
      this.line(`could not draw a ${ev.type} event: ${err.message}`, "warning");
    }
    return true;
  }

  draw(ev, env) {
    switch (ev.type) {
      case "session.started":
        this.agent = ev.agent || null;
        this.model = (ev.agent && ev.agent.model) || this.model;
        {
          const words =
            `Started ${ev.agent?.name || env.source}${ev.agent?.version ? " " + ev.agent.version : ""}` +
            (this.model ? ` · model ${this.model}` : "");
          // The manager and some drivers both announce a start: one line is enough.
          if (this.started && this.root.lastChild === this.started) this.started.textContent = words;
          else this.started = this.line(words, "info");
        }
        this.handlers.onAgent?.(this.agent);
        return;
      case "text.delta":
      case "text.complete":
        return this.text(ev, ev.type === "text.complete", false);
      case "reasoning.delta":
      case "reasoning.complete":
        return this.text(ev, ev.type === "reasoning.complete", true);
      case "tool.started":
        return this.toolStarted(ev);
      case "tool.updated":
        return this.toolUpdated(ev);
      case "tool.completed":
        return this.toolEnded(ev, ev.result?.is_error ? "error" : "done", ev.result?.output ?? "");
      case "tool.failed":
        return this.toolEnded(ev, ev.denied ? "denied" : "error", ev.error || ev.result?.output);
      case "file.diff":
        return this.diff(ev);
      case "plan.updated":
        return this.planUpdated(ev);
      case "approval.requested":
        return this.approvalCard(ev);
      case "approval.resolved":
        return this.settle(ev.request_id, DECISION_WORDS[ev.decision] || ev.decision, ev);
      case "question.asked":
        return this.questionCard(ev);
      case "question.answered":
        return this.settle(
          ev.request_id,
          "Answered: " + Object.values(ev.answers || {}).join("; "),
        );
      case "usage":
        addUsage(this.turnUsage, ev);
        addUsage(this.sessionUsage, ev);
        if (ev.model) this.model = ev.model;
        this.handlers.onUsage?.(this.sessionUsage);
        return;
      case "status":
        return this.status(ev);
      case "warning":
        return this.line(ev.message, "warning");
      case "error":
        return this.line(ev.message, "error");
      case "turn.completed":
        return this.turnEnd(ev);
      case "session.ended":
        return this.sessionEnd(ev);
      default:
        return; // unknown vendor payloads: nothing to draw
    }
  }

  container(parentCallId) {
    const parent = parentCallId && this.tools.get(parentCallId);
    return parent ? parent.children : this.root;
  }

  closeOpen() {
    this.openText = null;
    this.openReasoning = null;
  }

  line(text, level = "info") {
    this.closeOpen();
    const el = h("p", { class: `line ${level}`, role: level === "error" ? "alert" : null }, text);
    this.root.append(el);
    return el;
  }

  text(ev, done, reasoning) {
    const key = ev.message_id ? `${reasoning ? "r" : "t"}:${ev.message_id}` : null;
    const open = reasoning ? this.openReasoning : this.openText;
    let entry = key ? this.texts.get(key) : open;
    // A message streamed without an id and completed with one (or the reverse) is one message.
    if (!entry && open && !open.done && open.key !== key) entry = open;
    if (entry && entry.done && !done) entry = null; // a new message after a finished one
    if (!entry) {
      if (done && !ev.text) return;
      entry = reasoning ? this.newReasoning(ev) : this.newText(ev);
      entry.key = key;
    }
    if (key) this.texts.set(key, entry);
    if (reasoning) this.openReasoning = entry;
    else this.openText = entry;
    if (done) {
      entry.done = true;
      entry.raw = ev.text ?? entry.raw;
      clear(entry.body);
      entry.node = null;
      if (reasoning) entry.body.append(document.createTextNode(entry.raw));
      else entry.body.append(renderMarkdown(entry.raw));
      entry.el.classList.remove("streaming");
    } else {
      entry.raw += ev.text || "";
      if (!entry.node) {
        clear(entry.body);
        entry.node = entry.body.appendChild(document.createTextNode(""));
      }
      entry.node.data = entry.raw;
    }
  }

  newText(ev) {
    this.openReasoning = null;
    const body = h("div", { class: "body" });
    const el = h("article", { class: "msg assistant streaming", "aria-label": "Assistant" }, body);
    this.container(ev.parent_call_id).append(el);
    return { el, body, raw: "", done: false, node: null };
  }

  newReasoning(ev) {
    this.openText = null;
    const body = h("div", { class: "body" });
    const el = h("details", { class: "reasoning streaming" }, h("summary", {}, "Reasoning"), body);
    this.container(ev.parent_call_id).append(el);
    return { el, body, raw: "", done: false, node: null };
  }

  toolStarted(ev) {
    this.closeOpen();
    const label = ev.cmd || ev.file || ev.title || "";
    const status = h("span", { class: "badge running", text: "running" });
    const title = h("span", { class: "tool-title", text: label });
    const input = h("pre", { class: "tool-input", text: pretty(ev.input) });
    const output = h("pre", { class: "tool-output" });
    const children = h("div", { class: "tool-children" });
    const el = h(
      "details",
      { class: "tool", dataset: { call: ev.call_id, kind: ev.kind || "other" } },
      h(
        "summary",
        {},
        h("span", { class: "tool-kind", text: ev.kind || "tool" }),
        h("span", { class: "tool-name", text: ev.name }),
        title,
        status,
      ),
      h(
        "div",
        { class: "tool-body" },
        h("div", { class: "label", text: "Input" }),
        input,
        h("div", { class: "label", text: "Output" }),
        output,
        children,
      ),
    );
    this.container(ev.parent_call_id).append(el);
    this.tools.set(ev.call_id, { el, status, title, input, output, children, out: "" });
  }

  toolUpdated(ev) {
    const t = this.tools.get(ev.call_id);
    if (!t) return;
    if (ev.input !== undefined && ev.input !== null) t.input.textContent = pretty(ev.input);
    const label = ev.cmd || ev.file || ev.title;
    if (label) t.title.textContent = label;
    if (ev.output_delta) {
      t.out += ev.output_delta;
      t.output.textContent = t.out;
    }
  }

  toolEnded(ev, state, output) {
    let t = this.tools.get(ev.call_id);
    if (!t) {
      this.toolStarted({ call_id: ev.call_id, name: ev.name || "tool", kind: ev.kind });
      t = this.tools.get(ev.call_id);
    }
    this.closeOpen();
    t.status.className = `badge ${state}`;
    t.status.textContent = state;
    t.el.classList.add(state);
    if (output) t.output.textContent = output;
  }

  diff(ev) {
    this.closeOpen();
    const body = h("pre", { class: "diff-body" });
    const lines = [];
    if (ev.diff) {
      lines.push(...ev.diff.replace(/\n$/, "").split("\n"));
    } else {
      if (ev.old_text) lines.push(...ev.old_text.replace(/\n$/, "").split("\n").map((l) => "-" + l));
      if (ev.new_text) lines.push(...ev.new_text.replace(/\n$/, "").split("\n").map((l) => "+" + l));
    }
    for (const l of lines) {
      let cls = "ctx";
      if (l.startsWith("+++") || l.startsWith("---")) cls = "file";
      else if (l.startsWith("@@")) cls = "hunk";
      else if (l.startsWith("+")) cls = "add";
      else if (l.startsWith("-")) cls = "del";
      body.append(h("span", { class: `dl ${cls}`, text: l + "\n" }));
    }
    const el = h(
      "figure",
      { class: "diff" },
      h("figcaption", {}, "Changed ", h("code", { text: ev.path })),
      body,
    );
    this.root.append(el);
  }

  planUpdated(ev) {
    this.closeOpen();
    const list = h("ol", { class: "plan-entries" });
    for (const entry of ev.entries || []) {
      const status = entry.status || "pending";
      list.append(
        h(
          "li",
          { class: `plan-${status}` },
          h("span", { class: "badge", text: status.replace("_", " ") }),
          " ",
          entry.content,
        ),
      );
    }
    const el = h(
      "section",
      { class: "plan card", "aria-label": "Plan" },
      h("h3", {}, "Plan"),
      ev.explanation ? h("p", {}, ev.explanation) : null,
      list,
    );
    if (this.plan && this.plan.isConnected !== false && this.plan.parentNode === this.root) {
      this.plan.replaceWith(el);
    } else {
      this.root.append(el);
    }
    this.plan = el;
  }

  approvalCard(ev) {
    drawApprovalCard(this, ev);
  }

  questionCard(ev) {
    drawQuestionCard(this, ev);
  }

  async answer(requestId, send) {
    const card = this.cards.get(requestId);
    if (!card || !card.pending) return;
    card.controls.forEach((c) => (c.disabled = true));
    card.state.textContent = "Sending your answer…";
    try {
      await send();
    } catch (err) {
      if (card.pending) {
        card.controls.forEach((c) => (c.disabled = false));
        card.state.textContent = `Could not answer: ${err.message}`;
      }
    }
  }

  settle(requestId, words, resolved = null) {
    const card = this.cards.get(requestId);
    if (!card || !card.pending) return;
    card.pending = false;
    card.el.classList.remove("pending");
    card.el.classList.add("settled");
    card.controls.forEach((c) => {
      c.disabled = true;
      const chosen = resolved && c.dataset.decision === resolved.decision &&
        (!resolved.option_id || !c.dataset.option || c.dataset.option === resolved.option_id);
      if (chosen) c.classList.add("chosen");
    });
    card.state.textContent = words;
  }

  settleAll(words) {
    for (const id of this.cards.keys()) this.settle(id, words);
  }

  status(ev) {
    const s = ev.status || "";
    if (s.startsWith("prompt.")) return this.prompt(ev.raw || {}, s.slice(7));
    if (QUIET_STATUS.has(s)) return;
    if (s === "model" && ev.message) this.model = ev.message;
    if (s === "disconnected") this.settleAll("Cancelled: the session disconnected");
    this.line(ev.message ? `${s}: ${ev.message}` : s, "info");
    if (s === "model") this.handlers.onAgent?.(this.agent);
  }

  prompt(raw, state) {
    const pid = raw.prompt_id;
    if (!pid) return;
    let entry = this.prompts.get(pid);
    if (state === "queued") {
      if (entry) this.promptState(entry, "retried", "Retried: queued again.");
      return;
    }
    if (state === "sending" || !entry || entry.state === "retried") {
      if (entry && entry.state !== "retried") this.promptState(entry, "retried", "Retried below.");
      this.closeOpen();
      entry = this.newPrompt(pid, raw.text || "");
    }
    if (raw.text !== undefined && raw.text !== null) entry.body.textContent = raw.text;
    let words = PROMPT_WORDING[state] || state;
    if (state === "failed" && raw.error) words = `${words} (${raw.error})`;
    this.promptState(entry, state, words);
  }

  newPrompt(pid, text) {
    const body = h("div", { class: "body", text });
    const badge = h("p", { class: "prompt-state" });
    const actions = h("div", { class: "prompt-actions" });
    const el = h(
      "article",
      { class: "msg user", "aria-label": "Your prompt", dataset: { prompt: pid } },
      body,
      badge,
      actions,
    );
    this.root.append(el);
    const entry = { el, body, badge, actions, state: null, pid };
    this.prompts.set(pid, entry);
    return entry;
  }

  promptState(entry, state, words) {
    entry.state = state;
    entry.el.dataset.state = state;
    entry.badge.textContent = state === "delivered" ? "" : words;
    entry.badge.className = `prompt-state ${state}`;
    clear(entry.actions);
    if (state === "failed" || state === "indeterminate") {
      entry.actions.append(
        h(
          "button",
          { type: "button", onclick: () => this.handlers.onRetry?.(entry.pid) },
          "Retry",
        ),
        h(
          "button",
          { type: "button", onclick: () => this.handlers.onCancelPrompt?.(entry.pid) },
          "Cancel",
        ),
      );
    }
  }

  turnEnd(ev) {
    this.settleAll("Cancelled: the turn ended");
    const words = TURN_WORDS[ev.stop_reason || "end_turn"] || `Turn ended: ${ev.stop_reason}`;
    const usage = usageText(this.turnUsage);
    const el = this.line(
      [words + (ev.error ? `: ${ev.error}` : ""), usage].filter(Boolean).join(" · "),
      ev.stop_reason === "error" ? "error" : "turn-end",
    );
    el.classList.add("turn-end");
    this.turnUsage = emptyUsage();
    this.plan = null;
    this.handlers.onTurnEnd?.(ev);
  }

  sessionEnd(ev) {
    this.settleAll("Cancelled: the session ended");
    const words = END_WORDS[ev.reason] || `Session ended (${ev.reason})`;
    const el = this.line(
      words + (ev.message && ev.message !== ev.reason ? `: ${ev.message}` : ""),
      ev.reason === "failed" ? "error" : "info",
    );
    el.classList.add("session-end");
    if (ev.stderr_tail) {
      this.root.append(
        h("details", { class: "stderr" }, h("summary", {}, "Agent stderr"), h("pre", { text: ev.stderr_tail })),
      );
    }
  }
}
