// The start page: adapters (first run: installed, pinned, repair), a new session, the sessions.

import { get, post } from "./api.js";
import { applyEffortChoice, chosenEffort, effortChoice } from "./efforts.js";
import { h, clear, formatCost, formatTime } from "./dom.js";

export const INTENTS = [
  ["work", "Work", "edit files and run commands in the project"],
  ["review", "Review", "read and comment, no edits"],
  ["act-pr", "Act (PR)", "work, then commit, push and open a pull request"],
  ["full", "Full access", "no restrictions"],
  ["ask", "Ask (read-only)", "strictly read-only"],
  ["", "Approve each action", "no intent: the agent asks before each edit or command it would run, and you decide every time"],
];
const DEFAULT_INTENTS = ["work", "review", "act-pr"];
const ATTENTION_WORDS = {
  approval: "Approval pending",
  question: "Question pending",
  failed: "Failed",
  finished: "Turn finished",
};

export class HomeView {
  constructor({ overview, seen, navigate }) {
    this.overview = overview;
    this.seen = seen;
    this.navigate = navigate;
    this.adapters = [];
  }

  async mount(main) {
    this.main = main;
    clear(main);
    this.sessionsBox = h("section", { class: "sessions", "aria-labelledby": "sessions-title" });
    this.adaptersBox = h("section", { class: "adapters", "aria-labelledby": "adapters-title" },
      h("h2", { id: "adapters-title" }, "Agents"), h("p", { role: "status" }, "Detecting installed agents…"));
    this.formBox = h("section", { class: "new-session", "aria-labelledby": "new-title" });
    main.append(
      h("h1", { tabindex: "-1" }, "corral"),
      h("p", { class: "lede" }, "Chat with any coding agent on this machine, one surface for all of them."),
      this.formBox,
      this.sessionsBox,
      this.adaptersBox,
    );
    this.renderSessions(this.overview());
    this.settings = await get("/api/settings").catch(() => null);
    try {
      this.adapters = await get("/api/adapters");
    } catch (e) {
      clear(this.adaptersBox).append(h("h2", { id: "adapters-title" }, "Agents"),
        h("p", { class: "error-text", role: "alert" }, `Could not list adapters: ${e.message}`));
      return;
    }
    this.renderAdapters();
    this.renderForm();
  }

  unmount() {}

  update(overview) {
    if (this.sessionsBox) this.renderSessions(overview);
  }

  renderAdapters() {
    const real = this.adapters.filter((a) => !a.demo);
    const rows = real.map((a) =>
      h(
        "tr",
        { dataset: { adapter: a.id } },
        h("th", { scope: "row" }, a.display_name, h("div", { class: "hint", text: a.id })),
        h("td", {}, a.installed ? h("span", { class: "badge ok", text: "installed" })
          : h("span", { class: "badge missing", text: a.source === "unavailable" ? "unavailable" : "missing" })),
        h("td", {}, a.pinned_version || "—"),
        h("td", {}, a.installed_version || "—",
          a.installed_version && a.pinned_version && a.installed_version !== a.pinned_version
            ? h("span", { class: "badge warn", text: "not the pinned version" }) : null),
        h("td", {}, a.logged_in === null ? "unknown" : a.logged_in ? "yes" : "no"),
        h("td", {}, a.repair && (!a.installed || a.installed_version !== a.pinned_version)
          ? h("code", { class: "repair", text: a.repair.join(" ") }) : a.installed ? "—" : a.error || "—"),
      ),
    );
    const table = h(
      "table",
      { class: "adapter-table" },
      h("caption", {}, "Agent CLIs corral can drive. Login state is not read by corral: it never looks at your credentials."),
      h("thead", {}, h("tr", {}, ["Agent", "Installed", "Pinned", "Version", "Logged in", "Install or repair"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, rows),
    );
    clear(this.adaptersBox).append(
      h("h2", { id: "adapters-title" }, "Agents"),
      table,
      h("button", { type: "button", onclick: async () => {
        this.adapters = await get("/api/adapters?refresh=true");
        this.renderAdapters();
        this.renderForm();
      } }, "Detect again"),
    );
  }

  renderForm() {
    const usable = this.adapters.filter((a) => a.installed);
    const demos = usable.filter((a) => a.demo);
    const select = h("select", { id: "new-adapter", name: "adapter_id", required: true });
    const realGroup = h("optgroup", { label: "Your agents (use your own login)" });
    const demoGroup = h("optgroup", { label: "Demo provider: scripted model, no account needed" });
    for (const a of usable) (a.demo ? demoGroup : realGroup).append(h("option", { value: a.id }, a.display_name));
    if (realGroup.children.length) select.append(realGroup);
    if (demoGroup.children.length) select.append(demoGroup);
    const cwd = h("input", { id: "new-cwd", name: "cwd", type: "text", placeholder: "/path/to/project", autocomplete: "off" });
    cwd.value = localStorage.getItem("corral.lastProject") || "";
    const model = h("input", { id: "new-model", name: "model", type: "text", placeholder: "adapter default", list: "model-list" });
    const modelList = h("datalist", { id: "model-list" });
    // Efforts as the agent lists them for the chosen model (efforts.js), never a fixed list.
    const effort = h("select", { id: "new-effort", name: "effort" });
    const effortText = h("input", { id: "new-effort-text", name: "effort-text", type: "text", placeholder: "agent default", autocomplete: "off", hidden: true });
    const effortHint = h("p", { class: "hint", id: "effort-hint" });
    let modelsList = null;
    const refreshEfforts = (wanted) => applyEffortChoice(effortChoice(modelsList, model.value), effort, effortText, effortHint, wanted);
    model.addEventListener("input", () => refreshEfforts());
    model.addEventListener("change", () => refreshEfforts());
    const intent = h("select", { id: "new-intent", name: "intent" });
    const intentHint = h("p", { class: "hint", id: "intent-hint" });
    const refreshIntents = () => {
      const a = this.adapters.find((x) => x.id === select.value);
      const allowed = a?.enforceable_intents ?? DEFAULT_INTENTS;
      clear(intent);
      // "Approve each action" (no intent) enforces nothing itself, so every adapter offers it.
      for (const [value, label] of INTENTS) {
        if (value === "" || allowed.includes(value)) intent.append(h("option", { value }, label));
      }
      const describe = () => {
        const row = INTENTS.find(([v]) => v === intent.value);
        const limit = a?.enforceable_intents
          ? "Only intents this adapter can enforce are offered."
          : "Ask (read-only) is offered only where the adapter can enforce it.";
        intentHint.textContent = row ? `${row[1]}: ${row[2]}. ${limit}` : limit;
      };
      intent.onchange = describe;
      describe();
      const isDemo = Boolean(a?.demo);
      cwd.placeholder = isDemo ? "optional: the demo uses a scratch directory" : "/path/to/project";
    };
    const modelHint = h("p", { class: "hint", id: "model-hint" });
    const refreshModels = async () => {
      const a = this.adapters.find((x) => x.id === select.value);
      if (!a) return;
      const wanted = chosenEffort(effort, effortText) || undefined;
      clear(modelList);
      modelsList = null;
      modelHint.textContent = "";
      refreshEfforts(wanted);
      effortHint.textContent = "Asking the agent for its efforts…";
      if (a.provides_models) modelHint.textContent = "Asking the agent for its models…";
      try {
        // Instant for an agent that lists nothing (it still says whether it takes an effort).
        const list = await get(`/api/adapters/${encodeURIComponent(a.id)}/models`);
        if (select.value !== a.id) return;
        modelsList = list;
        for (const m of list.models) modelList.append(h("option", { value: m }));
        if (!a.provides_models) {
          const why = a.models_unavailable ? ` (${a.models_unavailable})` : "";
          modelHint.textContent = `This agent does not list its models${why}: type one, or keep its default.`;
        } else {
          modelHint.textContent = list.live
            ? `${list.models.length} model(s) listed by the agent.`
            : list.reason || "No live list.";
        }
      } catch (err) {
        modelHint.textContent = `Could not list models: ${err.message}`;
      }
      refreshEfforts(wanted);
    };
    // The adapter's defaults on the service (settings page, or the last choices made here).
    const prefill = () => {
      const saved = this.settings?.adapter_defaults?.[select.value] || {};
      model.value = typeof saved.model === "string" ? saved.model : "";
      refreshEfforts(typeof saved.effort === "string" ? saved.effort : "");
      if (typeof saved.intent === "string" && [...intent.options].some((o) => o.value === saved.intent)) {
        intent.value = saved.intent;
        intent.onchange?.();
      }
    };
    select.addEventListener("change", refreshIntents);
    select.addEventListener("change", () => { modelsList = null; prefill(); });
    select.addEventListener("change", refreshModels);
    const error = h("p", { class: "error-text", role: "alert" });
    const form = h(
      "form",
      {
        class: "stack",
        onsubmit: async (e) => {
          e.preventDefault();
          error.textContent = "";
          // Every choice is sent: blank is null (the agent's own default), so the adapter's
          // profile, already shown in the fields, is not applied a second time on the service.
          const body = { adapter_id: select.value };
          body.intent = intent.value || null;
          if (cwd.value.trim()) body.cwd = cwd.value.trim();
          body.model = model.value.trim() || null;
          body.effort = chosenEffort(effort, effortText) || null;
          submit.disabled = true;
          submit.textContent = "Starting…";
          try {
            const record = await post("/api/sessions", body);
            if (body.cwd) localStorage.setItem("corral.lastProject", body.cwd);
            this.navigate(`#/s/${record.id}`);
          } catch (err) {
            error.textContent = `Could not start: ${err.message}`;
            submit.disabled = false;
            submit.textContent = "Start session";
          }
        },
      },
      field("Agent", select),
      field("Project directory", cwd),
      field("Model", model, modelList, modelHint),
      field("Effort", effort, effortText, effortHint),
      field("Intent", intent, intentHint),
    );
    const submit = h("button", { type: "submit", class: "primary" }, "Start session");
    form.append(h("div", { class: "choices" }, submit), error);
    refreshIntents();
    prefill();
    refreshModels();
    const quick = demos.length
      ? h("div", { class: "demo-callout" },
          h("p", {}, h("strong", {}, "No agent logged in? "),
            "Try the demo provider: the real ", demos[0].display_name.split(" · ")[0],
            " CLI driven by corral's scripted model. Nothing leaves this machine."),
          h("button", { type: "button", class: "primary", id: "start-demo", onclick: async () => {
            try {
              const record = await post("/api/sessions", { adapter_id: demos[0].id, intent: "work" });
              this.navigate(`#/s/${record.id}`);
            } catch (err) {
              error.textContent = `Could not start the demo: ${err.message}`;
            }
          } }, "Start a demo session"))
      : null;
    clear(this.formBox).append(
      h("h2", { id: "new-title" }, "New session"),
      quick,
      usable.length ? form : h("p", {}, "No agent CLI is installed. Install one with the command shown below."),
    );
  }

  renderSessions(list) {
    const box = this.sessionsBox;
    clear(box).append(h("h2", { id: "sessions-title" }, "Sessions"));
    if (!list.length) {
      box.append(h("p", {}, "No sessions yet. Start one above."));
      return;
    }
    const byProject = new Map();
    for (const item of list) {
      const key = item.session.cwd || "(no project directory)";
      if (!byProject.has(key)) byProject.set(key, []);
      byProject.get(key).push(item);
    }
    for (const [project, items] of byProject) {
      const rows = items.map((o) => {
        const s = o.session;
        const att = effectiveAttention(o, this.seen(s.id));
        return h(
          "tr",
          { dataset: { session: s.id, attention: att || "" } },
          h("th", { scope: "row" }, h("a", { href: `#/s/${s.id}` }, s.agent_info?.name || s.adapter_id),
            h("div", { class: "hint", text: s.id })),
          h("td", {}, h("span", { class: `badge state state-${s.state}`, text: s.state })),
          h("td", {}, att ? h("span", { class: `badge attention att-${att}`, text: ATTENTION_WORDS[att] }) : "—"),
          h("td", {}, formatTime(o.last_activity)),
          h("td", {}, String(o.turns)),
          h("td", {}, o.cost_usd !== null ? formatCost(o.cost_usd) : o.input_tokens + o.output_tokens ? `${(o.input_tokens + o.output_tokens).toLocaleString()} tokens` : "—"),
        );
      });
      box.append(
        h("h3", { class: "project" }, project),
        h("table", { class: "session-table" },
          h("thead", {}, h("tr", {}, ["Agent", "State", "Needs you", "Last activity", "Turns", "Cost"].map((t) => h("th", { scope: "col" }, t)))),
          h("tbody", {}, rows)),
      );
    }
  }
}

function field(label, control, ...extra) {
  return h("div", { class: "field" }, h("label", { for: control.id }, label), control, ...extra);
}

/** Attention as the page shows it: `finished` only until the user has seen that turn. */
export function effectiveAttention(o, seenSeq) {
  if (o.attention === "finished" && o.last_turn_seq <= seenSeq) return null;
  return o.attention;
}

export { ATTENTION_WORDS };
