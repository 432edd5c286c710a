// Acting on a fact from the panel: confirm, correct, and forget (or erase it for good, behind a
// confirmation dialog), through the operations the MCP tools run: POST /api/confirm,
// /api/correct and /api/forget. After each, the graph is fetched again and the fact shown.

import { ACTIVE, announce, byId, el, postJSON, shorten } from "./dom.js";
import { hooks, state } from "./state.js";

let current = null; // the fact the open dialog acts on

function button(label, testid, onClick, danger = false) {
  return el(
    "button",
    { type: "button", className: `action${danger ? " danger" : ""}`, "data-testid": testid, onClick },
    label,
  );
}

// The panel's buttons for `fact` (an explained fact): what its status allows.
export function factActions(fact) {
  if (fact.status === "purged") return null;
  if (!state.writable)
    return el("p", { className: "muted" }, "Read-only: this explorer listens beyond loopback.");
  const active = ACTIVE.includes(fact.status);
  return el(
    "div",
    { className: "actions", role: "group", "aria-label": "Act on this fact", "data-testid": "panel-actions" },
    active && fact.status !== "confirmed"
      ? button("Confirm", "action-confirm", () => confirmFact(fact))
      : null,
    active ? button("Correct…", "action-correct", () => openCorrect(fact)) : null,
    button(fact.status === "retracted" ? "Erase…" : "Forget…", "action-forget", () => openForget(fact), true),
  );
}

async function after(factId, message) {
  announce(message);
  try {
    await hooks.reload({ keepPositions: true });
  } catch (err) {
    announce(`${message} The graph could not be redrawn: ${err.message}`, true);
  }
  await hooks.select(factId);
}

async function confirmFact(fact) {
  let done;
  try {
    done = await postJSON("/api/confirm", { fact_id: fact.id, scope: state.filters.scope });
  } catch (err) {
    announce(`Could not confirm: ${err.message}`, true);
    return;
  }
  await after(done.id, `Confirmed “${shorten(done.content, 60)}”: pinned, it will not fade.`);
}

function openCorrect(fact) {
  current = fact;
  byId("correct-old").textContent = fact.content;
  byId("correct-content").value = fact.content;
  byId("correct-when").value = "";
  byId("correct-error").textContent = "";
  byId("correct-dialog").showModal();
  byId("correct-content").select();
}

async function submitCorrect(event) {
  event.preventDefault();
  const content = byId("correct-content").value.trim();
  const error = byId("correct-error");
  if (!content || content === current.content) {
    error.textContent = "Write the corrected statement: it replaces the one above.";
    return;
  }
  const body = { fact_id: current.id, content, scope: state.filters.scope };
  if (byId("correct-when").value) body.event_time = byId("correct-when").value;
  let done;
  try {
    done = await postJSON("/api/correct", body);
  } catch (err) {
    error.textContent = err.message;
    return;
  }
  byId("correct-dialog").close();
  await after(done.id, "Corrected: the new fact supersedes the old one, which is kept as history.");
}

function showPurgeChoice() {
  const purge = byId("forget-purge").checked;
  byId("forget-submit").textContent = purge ? "Erase for good" : "Forget";
  byId("forget-reason").disabled = purge;
  byId("forget-warning").hidden = !purge;
}

function openForget(fact) {
  current = fact;
  byId("forget-text").textContent = fact.content;
  byId("forget-reason").value = "";
  byId("forget-purge").checked = fact.status === "retracted"; // forgotten already: erasing is what is left
  byId("forget-error").textContent = "";
  showPurgeChoice();
  byId("forget-dialog").showModal();
  byId("forget-reason").focus();
}

async function submitForget(event) {
  event.preventDefault();
  const purge = byId("forget-purge").checked;
  const reason = byId("forget-reason").value.trim();
  const body = { fact_id: current.id, purge, scope: state.filters.scope };
  if (reason && !purge) body.reason = reason;
  try {
    await postJSON("/api/forget", body);
  } catch (err) {
    byId("forget-error").textContent = err.message;
    return;
  }
  byId("forget-dialog").close();
  await after(
    current.id,
    purge
      ? "Erased: no file of memory keeps its text any more."
      : "Forgotten: it no longer appears in search or recall; its history is kept.",
  );
}

export function wireActions() {
  byId("correct-form").addEventListener("submit", submitCorrect);
  byId("forget-form").addEventListener("submit", submitForget);
  byId("forget-purge").addEventListener("change", showPurgeChoice);
  for (const cancel of document.querySelectorAll("dialog [data-close]")) {
    cancel.addEventListener("click", () => cancel.closest("dialog").close());
  }
}
