// The settings page: the attention webhook, and per adapter its status, the conformance results
// recorded for its version, its verification (stale after a profile change) and its defaults.
// Everything comes from /api/settings, /api/settings/conformance and /api/adapters.

import { get, post, put } from "./api.js";
import { h, clear, formatTime } from "./dom.js";
import { applyEffortChoice, chosenEffort, effortChoice } from "./efforts.js";
import { INTENTS } from "./home.js";

const OUTCOME = { pass: "pass", fail: "fail", unsupported: "unsupported" };

export class SettingsView {
  async mount(main) {
    this.main = main;
    clear(main);
    this.status = h("p", { role: "status" }, "Loading settings…");
    main.append(h("h1", { tabindex: "-1" }, "Settings"), this.status);
    try {
      [this.settings, this.adapters, this.conformance] = await Promise.all([
        get("/api/settings"), get("/api/adapters"), get("/api/settings/conformance"),
      ]);
    } catch (e) {
      this.status.textContent = "";
      main.append(h("p", { class: "error-text", role: "alert" }, `Could not load the settings: ${e.message}`));
      return;
    }
    this.status.textContent = "";
    this.webhookBox = h("section", { class: "settings-webhook", "aria-labelledby": "webhook-title" });
    this.adaptersBox = h("section", { class: "settings-adapters", "aria-labelledby": "settings-adapters-title" });
    main.append(this.webhookBox, this.adaptersBox);
    this.renderWebhook();
    this.renderAdapters();
  }

  unmount() {}

  renderWebhook() {
    const input = h("input", { id: "webhook-url", type: "url", placeholder: "https://example.invalid/hook", autocomplete: "off" });
    input.value = this.settings.webhook_url || "";
    const note = h("p", { class: "hint", id: "webhook-status", role: "status" }, deliveryText(this.settings));
    const form = h("form", {
      class: "stack",
      onsubmit: async (e) => {
        e.preventDefault();
        try {
          this.settings = await put("/api/settings/webhook", { url: input.value.trim() || null });
          note.textContent = this.settings.webhook_url ? "Saved. " + deliveryText(this.settings) : "Webhook off.";
        } catch (err) {
          note.textContent = `Not saved: ${err.message}`;
        }
      },
    },
    h("div", { class: "field" }, h("label", { for: "webhook-url" }, "Webhook URL (http or https; blank: off)"), input),
    h("div", { class: "choices" }, h("button", { type: "submit", class: "primary", id: "webhook-save" }, "Save webhook")),
    note);
    clear(this.webhookBox).append(
      h("h2", { id: "webhook-title" }, "Attention webhook"),
      h("p", {}, "Receives the same events as the session list (approval pending, question, turn finished, failed) as JSON."),
      form,
    );
  }

  renderAdapters() {
    const list = h("ul", { class: "settings-adapter-list" });
    for (const a of this.adapters.filter((x) => !x.demo)) list.append(h("li", {}, this.adapterCard(a)));
    clear(this.adaptersBox).append(h("h2", { id: "settings-adapters-title" }, "Adapters"), list);
  }

  adapterCard(a) {
    const card = h("article", { class: "adapter-settings", id: `settings-${a.id}`, "aria-labelledby": `settings-${a.id}-name` });
    const version = a.installed_version || a.pinned_version;
    const installed = a.installed ? `installed${version ? ` ${version}` : ""} (${a.source})` : "not installed";
    card.append(h("h3", { id: `settings-${a.id}-name` }, a.display_name),
      h("p", { class: "adapter-status" }, installed));
    card.append(this.verifyBlock(a), this.conformanceBlock(a, version), this.defaultsForm(a));
    return card;
  }

  verifyBlock(a) {
    const state = this.settings.verification.find((v) => v.adapter_id === a.id);
    const text = h("span", { class: "verify-state" }, verifyText(state));
    const button = h("button", { type: "button", class: "verify" }, "Verify now");
    button.addEventListener("click", async () => {
      button.disabled = true;
      text.textContent = "Verifying…";
      try {
        const fresh = await post(`/api/settings/adapters/${encodeURIComponent(a.id)}/verify`);
        this.settings.verification = this.settings.verification.filter((v) => v.adapter_id !== a.id).concat([fresh]);
        text.textContent = verifyText(fresh);
      } catch (err) {
        text.textContent = `Verify failed: ${err.message}`;
      } finally {
        button.disabled = false;
      }
    });
    return h("p", { class: "verify-line" }, "Verification: ", text, " ", button);
  }

  conformanceBlock(a, version) {
    const run = this.conformance.find((c) => c.adapter_id === a.id);
    if (!run) return h("p", { class: "conformance none" }, "Conformance: no run recorded. Run `corral conformance` to record one.");
    const same = !version || !run.version || run.version === version;
    const counts = {};
    for (const r of run.results) counts[r.outcome] = (counts[r.outcome] || 0) + 1;
    const summary = Object.entries(counts).map(([k, n]) => `${n} ${OUTCOME[k] || k}`).join(", ");
    const rows = h("table", { class: "conformance-table" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Scenario"), h("th", { scope: "col" }, "Result"), h("th", { scope: "col" }, "Why"))),
      h("tbody", {}, run.results.map((r) => h("tr", { class: `outcome-${r.outcome}` },
        h("td", {}, r.scenario), h("td", {}, OUTCOME[r.outcome] || r.outcome), h("td", {}, r.reason || "")))));
    return h("details", { class: "conformance" },
      h("summary", {}, `Conformance (${run.version || "version unknown"}, ${formatTime(run.ran_at)}): ${summary}`,
        same ? null : h("span", { class: "badge stale" }, ` recorded for ${run.version}, installed ${version}`)),
      rows);
  }

  defaultsForm(a) {
    const saved = this.settings.adapter_defaults[a.id] || {};
    const id = (name) => `defaults-${a.id}-${name}`;
    const model = h("input", { id: id("model"), type: "text", placeholder: "adapter default", autocomplete: "off", list: id("models") });
    model.value = saved.model || "";
    const models = h("datalist", { id: id("models") });
    // Efforts as the agent lists them for that model (efforts.js): from the service's cached list
    // at first (no agent is started to draw this page), the live one on "List models and efforts".
    const effort = h("select", { id: id("effort") });
    const effortText = h("input", { id: id("effort-text"), type: "text", placeholder: "adapter default", autocomplete: "off", hidden: true });
    const effortHint = h("span", { class: "hint", id: id("effort-hint") });
    let list = null;
    const refresh = (wanted) => applyEffortChoice(effortChoice(list, model.value), effort, effortText, effortHint, wanted);
    const load = async (probe) => {
      effortHint.textContent = probe ? "Asking the agent…" : "";
      try {
        list = await get(`/api/adapters/${encodeURIComponent(a.id)}/models${probe ? "" : "?probe=false"}`);
        clear(models);
        for (const m of list.models) models.append(h("option", { value: m }));
      } catch (err) {
        list = null;
        effortHint.textContent = `Could not list: ${err.message}`;
        return;
      }
      refresh(chosenEffort(effort, effortText) || saved.effort || "");
    };
    model.addEventListener("input", () => refresh());
    refresh(saved.effort || "");
    load(false);
    const ask = h("button", { type: "button", class: "list-efforts", onclick: () => load(true) }, "List models and efforts");
    const allowed = a.enforceable_intents ?? ["work", "review", "act-pr"];
    const intent = h("select", { id: id("intent") }, h("option", { value: "" }, "no default"),
      INTENTS.filter(([v]) => allowed.includes(v)).map(([v, label]) => h("option", { value: v }, label)));
    intent.value = saved.intent || "";
    const note = h("span", { class: "hint", role: "status" });
    const form = h("form", {
      class: "defaults",
      onsubmit: async (e) => {
        e.preventDefault();
        try {
          this.settings = await put(`/api/settings/adapters/${encodeURIComponent(a.id)}/defaults`, {
            model: model.value.trim() || null, effort: chosenEffort(effort, effortText) || null, intent: intent.value || null,
          });
          note.textContent = "Saved.";
          // A changed profile makes a verified adapter stale: the next launch re-verifies.
          const shown = form.closest("article")?.querySelector(".verify-state");
          if (shown) shown.textContent = verifyText(this.settings.verification.find((v) => v.adapter_id === a.id));
        } catch (err) {
          note.textContent = `Not saved: ${err.message}`;
        }
      },
    },
    h("div", { class: "field" }, h("label", { for: id("model") }, "Default model"), model, models),
    h("div", { class: "field" }, h("label", { for: id("effort") }, "Default effort"), effort, effortText, effortHint),
    ask,
    h("div", { class: "field" }, h("label", { for: id("intent") }, "Default intent"), intent),
    h("button", { type: "submit" }, "Save defaults"), note);
    return form;
  }
}

function deliveryText(settings) {
  const d = settings.webhook_delivery;
  if (!settings.webhook_url) return "Webhook off.";
  const last = d.last_error ? ` Last error: ${d.last_error}.` : d.last_status ? ` Last status: ${d.last_status}.` : "";
  return `${d.sent} sent, ${d.failed} failed, ${d.dropped} dropped.${last}`;
}

function verifyText(state) {
  if (!state || !state.verified) return "never verified";
  const when = formatTime(state.checked_at);
  if (state.stale && state.ok) return `stale: the profile changed since ${when}; the next launch re-verifies`;
  if (!state.ok) return `failed ${when}: ${state.detail || ""}`;
  return `verified ${when}`;
}
