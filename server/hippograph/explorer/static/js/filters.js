// Filters: which scope the page shows (with global, as a search from there would), and which
// kinds and statuses of facts are drawn. Each change fetches the graph again (the newest facts
// that pass, not a subset of those drawn).

import { KINDS, STATUSES, byId, el, getJSON, kindColour, tint } from "./dom.js";
import { state } from "./state.js";

function checkbox(group, value, swatchColour) {
  const id = `filter-${group}-${value}`;
  return el(
    "label",
    { className: "filter", for: id },
    el("input", { type: "checkbox", id, value, checked: true, "data-testid": id }),
    swatchColour
      ? el("span", {
          className: "dot",
          style: { background: tint(swatchColour, 0.6), borderColor: swatchColour },
          "aria-hidden": "true",
        })
      : null,
    value,
  );
}

function checked(container) {
  return new Set(Array.from(container.querySelectorAll("input:checked"), (input) => input.value));
}

// The query for /api/graph under the current filters, or null when they let nothing through.
export function graphQuery() {
  const { scope, kinds, statuses } = state.filters;
  if (!kinds.size || !statuses.size) return null;
  const params = new URLSearchParams({ scope });
  if (kinds.size < KINDS.length) params.set("kind", [...kinds].join(","));
  if (statuses.size < STATUSES.length) params.set("status", [...statuses].join(","));
  return params;
}

function remember(scope) {
  const url = new URL(window.location.href);
  url.searchParams.set("scope", scope);
  window.history.replaceState(null, "", url);
}

// Build the filter controls; `changed(what)` runs after each change ("scope", "kind", "status").
export async function setUpFilters(changed) {
  const asked = new URLSearchParams(window.location.search).get("scope");
  const known = await getJSON("/api/page");
  state.writable = known.writable;
  const scope = asked || known.scope;
  const scopes = known.scopes.includes(scope) ? known.scopes : [...known.scopes, scope].sort();
  const select = byId("filter-scope");
  select.replaceChildren(...scopes.map((s) => el("option", { value: s, selected: s === scope }, s)));
  const kinds = byId("filter-kinds");
  const statuses = byId("filter-statuses");
  kinds.append(...KINDS.map((kind) => checkbox("kind", kind, kindColour(kind))));
  statuses.append(...STATUSES.map((status) => checkbox("status", status)));
  state.filters = { scope, kinds: checked(kinds), statuses: checked(statuses) };

  select.addEventListener("change", () => {
    state.filters.scope = select.value;
    remember(select.value);
    changed("scope");
  });
  kinds.addEventListener("change", () => {
    state.filters.kinds = checked(kinds);
    changed("kind");
  });
  statuses.addEventListener("change", () => {
    state.filters.statuses = checked(statuses);
    changed("status");
  });
}
