// Reasoning efforts as the adapter lists them (GET /api/adapters/{id}/models): per model, never a
// fixed list. `effortChoice(list, model)` says what the form can offer for that model.

/**
 * → {kind, efforts, note, defaultEffort}
 * kind "none": the adapter or this model takes no effort (the control is disabled);
 * kind "list": exactly `efforts` are offered; kind "free": not listed, typed by hand (with why).
 */
export function effortChoice(list, model) {
  if (!list) return { kind: "free", efforts: [], note: "", defaultEffort: null };
  if (!list.takes_effort) {
    return { kind: "none", efforts: [], note: list.efforts_reason || "This agent takes no effort.", defaultEffort: null };
  }
  const entries = list.entries || [];
  const wanted = (model || "").trim();
  const entry = wanted
    ? entries.find((e) => e.id === wanted)
    : entries.find((e) => e.id === "default") || (entries.length === 1 ? entries[0] : null);
  if (entry) {
    if (entry.efforts === null) {
      return { kind: "free", efforts: [], note: list.efforts_reason || "The agent does not list this model's efforts.", defaultEffort: null };
    }
    if (!entry.efforts.length) {
      return { kind: "none", efforts: [], note: `${entry.name || entry.id} takes no effort.`, defaultEffort: null };
    }
    return { kind: "list", efforts: entry.efforts, note: `Efforts listed by the agent for ${entry.name || entry.id}.`, defaultEffort: entry.default_effort };
  }
  if (wanted && entries.length) {
    return { kind: "free", efforts: [], note: `The agent does not list ${wanted}; type an effort, or keep its default.`, defaultEffort: null };
  }
  // No model chosen: what any listed model offers (the agent's default model is one of them).
  const known = entries.filter((e) => e.efforts !== null);
  if (known.length && known.length === entries.length) {
    const union = [...new Set(known.flatMap((e) => e.efforts))];
    if (union.length) return { kind: "list", efforts: union, note: "Efforts listed by the agent for its models.", defaultEffort: null };
  }
  return { kind: "free", efforts: [], note: list.efforts_reason || "The agent does not list its efforts.", defaultEffort: null };
}

/** Fill `select` (and `text`, its free-typing twin) for `choice`; keeps `wanted` when offered. */
export function applyEffortChoice(choice, select, text, hint, wanted) {
  const keep = wanted ?? (choice.kind === "list" ? select.value : text.value);
  while (select.firstChild) select.removeChild(select.firstChild);
  const label = choice.defaultEffort ? `agent default (${choice.defaultEffort})` : "agent default";
  select.append(new Option(label, ""));
  for (const e of choice.efforts) select.append(new Option(e, e));
  select.hidden = choice.kind === "free";
  select.disabled = choice.kind === "none";
  text.hidden = choice.kind !== "free";
  text.disabled = choice.kind !== "free";
  if (choice.kind === "list") select.value = choice.efforts.includes(keep) ? keep : "";
  else select.value = "";
  text.value = choice.kind === "free" ? keep || "" : "";
  hint.textContent = choice.note;
  const owner = select.labels?.[0] || text.labels?.[0];
  if (owner) owner.htmlFor = choice.kind === "free" ? text.id : select.id;
}

/** The effort the user picked, or "" for the agent's default. */
export function chosenEffort(select, text) {
  return select.hidden ? text.value.trim() : select.disabled ? "" : select.value;
}

/** The composer's effort: the session's own, or the agent's default, with what the agent lists. */
export function effortLine(effort, choice) {
  if (choice.kind === "none") return `${effort || "none"} (${choice.note.replace(/\.$/, "")})`;
  const value = effort || (choice.defaultEffort ? `agent default (${choice.defaultEffort})` : "agent default");
  if (choice.kind === "list") return `${value} · listed: ${choice.efforts.join(", ")}`;
  return value;
}
