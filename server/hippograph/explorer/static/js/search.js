// Search: /api/search in the page's scope, the results listed, and the hits (with the paths
// between them) highlighted on the graph and the timeline.

import { byId, el, getJSON, kindBadge, number, statusBadge } from "./dom.js";
import { highlight } from "./graph.js";
import { markTimelineHits } from "./timeline.js";
import { hooks, state } from "./state.js";

const DEBOUNCE_MS = 300;
// Search ranks every fact it can reach; the page highlights the ones that stand out: those
// scoring at least this share of the best, at most MAX_LIT.
const HIT_SHARE = 0.2;
const MAX_LIT = 10;
let debounce = 0;

function strongest(hits) {
  if (!hits.length) return [];
  const best = hits[0].score;
  return hits.filter((hit) => hit.score >= best * HIT_SHARE).slice(0, MAX_LIT);
}

function showHits(ids) {
  state.hits = ids;
  const drawn = highlight(ids);
  markTimelineHits();
  return drawn;
}

function resultButton(hit, lit) {
  return el(
    "button",
    {
      type: "button",
      className: `result${lit ? " lit" : ""}`,
      "data-testid": "search-result",
      "data-fact-id": hit.id,
      "data-lit": lit,
      onClick: () => hooks.select(hit.id, { centre: true }),
    },
    el("span", { className: `text status-${hit.status}` }, hit.content),
    el(
      "span",
      { className: "meta" },
      kindBadge(hit.kind),
      statusBadge(hit.status),
      ` score ${number(hit.score)}`,
    ),
  );
}

function summarise(count, lit, drawn) {
  if (!count) return "No facts match.";
  const matched = `${count} fact${count === 1 ? "" : "s"} match`;
  const best = lit === count ? "all highlighted" : `the best ${lit} highlighted`;
  if (drawn === lit) return `${matched}, ${best} on the graph.`;
  return `${matched}, ${best}: ${drawn} of those are drawn (the others are outside the view).`;
}

export async function runSearch() {
  const query = byId("search-input").value.trim();
  const list = byId("results");
  const note = byId("results-note");
  const seq = ++state.searchSeq;
  if (!query) {
    list.replaceChildren();
    note.textContent = "Search to list matching facts.";
    showHits([]);
    return;
  }
  const params = new URLSearchParams({ q: query, scope: state.filters.scope });
  if (byId("search-history").checked) params.set("history", "1");
  note.textContent = "Searching…";
  let found;
  try {
    found = await getJSON(`/api/search?${params}`);
  } catch (err) {
    if (seq === state.searchSeq) {
      list.replaceChildren();
      note.textContent = err.message;
      showHits([]);
    }
    return;
  }
  if (seq !== state.searchSeq) return;
  const hits = found.results;
  const lit = strongest(hits);
  const drawn = showHits(lit.map((hit) => hit.id));
  note.textContent = summarise(hits.length, lit.length, drawn);
  list.replaceChildren(...hits.map((hit) => el("li", {}, resultButton(hit, lit.includes(hit)))));
}

function moveFocus(step) {
  const buttons = Array.from(byId("results").querySelectorAll("button.result"));
  if (!buttons.length) return;
  const at = buttons.indexOf(document.activeElement);
  const next = at === -1 ? 0 : Math.min(Math.max(at + step, 0), buttons.length - 1);
  buttons[next].focus();
}

export function wireSearch() {
  byId("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    clearTimeout(debounce);
    runSearch();
  });
  byId("search-input").addEventListener("input", () => {
    clearTimeout(debounce);
    debounce = setTimeout(runSearch, DEBOUNCE_MS);
  });
  byId("search-history").addEventListener("change", runSearch);
  byId("search-input").addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown") {
      event.preventDefault();
      moveFocus(1);
    }
  });
  byId("results").addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      moveFocus(event.key === "ArrowDown" ? 1 : -1);
    }
  });
}
