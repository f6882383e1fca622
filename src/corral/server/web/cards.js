// Action cards: approvals and questions, with explicit choices. Drawn into a Transcript, which
// keeps them pending until they are answered, denied, or cancelled by the end of the turn/session.

import { h, pretty } from "./dom.js";

export function drawApprovalCard(t, ev) {
  t.closeOpen();
  const id = `card-${ev.request_id}`;
  const what = ev.cmd || ev.file || ev.title || "";
  const state = h("p", { class: "card-state", role: "status", text: "Waiting for your answer" });
  const options = ev.options?.length
    ? ev.options
    : [
        { id: null, label: "Allow", decision: "allow" },
        { id: null, label: "Deny", decision: "deny" },
      ];
  const buttons = options.map((o) =>
    h(
      "button",
      {
        type: "button",
        class: o.decision.startsWith("allow") ? "primary" : "danger",
        dataset: { decision: o.decision, option: o.id || undefined },
        onclick: () => t.answer(ev.request_id, () => t.handlers.onApprove?.(ev.request_id, o)),
      },
      o.label,
    ),
  );
  const el = h(
    "section",
    { class: "card action approval pending", role: "group", "aria-labelledby": id },
    h("h3", { id }, `Approval needed: ${ev.tool_name}`, what ? h("code", { text: what }) : null),
    ev.input !== undefined && ev.input !== null
      ? h("details", {}, h("summary", {}, "Details"), h("pre", { text: pretty(ev.input) }))
      : null,
    h("div", { class: "choices" }, buttons),
    state,
  );
  t.root.append(el);
  t.cards.set(ev.request_id, { el, state, controls: buttons, pending: true });
}

export function drawQuestionCard(t, ev) {
  t.closeOpen();
  const id = `card-${ev.request_id}`;
  const state = h("p", { class: "card-state", role: "status", text: "Waiting for your answer" });
  const fields = [];
  const sets = (ev.questions || []).map((q, qi) => {
    const name = `q-${ev.request_id}-${qi}`;
    const inputs = (q.options || []).map((opt, oi) => {
      const input = h("input", {
        type: q.multi_select ? "checkbox" : "radio",
        name,
        value: opt,
        id: `${name}-${oi}`,
      });
      return h("label", { class: "choice", for: `${name}-${oi}` }, input, " ", opt);
    });
    const other = h("input", { type: "text", id: `${name}-other`, class: "other" });
    fields.push({ q, name, other });
    return h(
      "fieldset",
      {},
      h("legend", {}, q.header ? `${q.header}: ${q.question}` : q.question),
      inputs,
      h("label", { for: `${name}-other`, class: "other-label" }, "Other answer"),
      other,
    );
  });
  const submit = h("button", { type: "submit", class: "primary" }, "Answer");
  const form = h(
    "form",
    {
      onsubmit: (e) => {
        e.preventDefault();
        const answers = {};
        for (const f of fields) {
          const picked = [...form.querySelectorAll(`input[name="${CSS.escape(f.name)}"]:checked`)]
            .map((i) => i.value);
          const text = f.other.value.trim();
          answers[f.q.question] = text || picked.join(", ");
        }
        t.answer(ev.request_id, () => t.handlers.onAnswer?.(ev.request_id, answers));
      },
    },
    sets,
    h("div", { class: "choices" }, submit),
  );
  const el = h(
    "section",
    { class: "card action question pending", role: "group", "aria-labelledby": id },
    h("h3", { id }, "Question from the agent"),
    form,
    state,
  );
  t.root.append(el);
  const controls = [submit, ...form.querySelectorAll("input")];
  t.cards.set(ev.request_id, { el, state, controls, pending: true });
}
