// hippograph explorer: the page's entry. It draws /api/graph with cytoscape (graph.js) or as a
// timeline (timeline.js), under the filters (filters.js); searches (search.js); explains a
// node in the side panel (panel.js) and acts on a fact from there (actions.js). Plain DOM, no
// framework, no network beyond this server.

import { wireActions } from "./actions.js";
import { KIND_COLOURS, announce, byId, el, getJSON, tint } from "./dom.js";
import { graphQuery, setUpFilters } from "./filters.js";
import { draw, focusNode } from "./graph.js";
import { runLayout } from "./layout.js";
import { renderEntity, setPanel, showFact } from "./panel.js";
import { runSearch, wireSearch } from "./search.js";
import { hooks, state } from "./state.js";
import { markTimelineSelected, renderTimeline, showView } from "./timeline.js";

const api = { loaded: false, error: null, select, search: runSearch, reload, showView };
Object.defineProperty(api, "cy", { get: () => state.cy });
Object.defineProperty(api, "graph", { get: () => state.graph });
window.hippographExplorer = api;
hooks.select = select;
hooks.reload = reload;

function select(id, options = {}) {
  state.selected = id;
  markTimelineSelected();
  const node = state.cy ? state.cy.getElementById(id) : null;
  const inView = Boolean(node && node.nonempty());
  if (inView) focusNode(node, Boolean(options.centre) && state.view === "graph");
  if (!id.startsWith("e_")) return showFact(id, inView);
  if (inView) renderEntity(node);
  else
    setPanel("Entity", el("p", { className: "note" }, "Not drawn: no fact in the current view is about it."));
  return Promise.resolve();
}

function renderSummary(graph, filtered) {
  const summary = byId("summary");
  summary.classList.remove("error");
  if (!graph.nodes.length) {
    summary.textContent = filtered ? "No facts pass the filters." : "Memory is empty: nothing to draw yet.";
    return;
  }
  const entities = graph.nodes.filter((n) => n.group === "entity").length;
  const shown = graph.facts_shown;
  const facts =
    shown === graph.facts_total ? `${shown} facts` : `the ${shown} most recent of ${graph.facts_total} facts`;
  summary.textContent = `Showing ${facts} and ${entities} entities.`;
}

const NOTHING = { nodes: [], edges: [], facts_total: 0, facts_shown: 0 };

// Fetch and draw the graph under the current filters (and list it on the timeline).
async function reload({ keepPositions = false } = {}) {
  const seq = ++state.graphSeq;
  const query = graphQuery();
  const graph = query ? await getJSON(`/api/graph?${query}`) : NOTHING;
  if (seq !== state.graphSeq) return;
  state.graph = graph;
  draw(graph, { keepPositions });
  renderSummary(graph, !query || query.has("kind") || query.has("status"));
  renderTimeline();
}

async function filtersChanged(what) {
  try {
    await reload();
  } catch (err) {
    announce(`Could not load the graph: ${err.message}`, true);
    return;
  }
  if (what === "scope") await runSearch(); // results depend on the scope
}

function renderLegend() {
  const swatch = (className, style) =>
    el("span", { className: `swatch ${className}`, style, "aria-hidden": "true" });
  const item = (s, ...text) => el("li", {}, s, el("span", {}, ...text));
  byId("legend").replaceChildren(
    item(swatch("entity"), "entity"),
    ...Object.entries(KIND_COLOURS).map(([kind, colour]) =>
      item(swatch("fact", { background: tint(colour, 0.8), borderColor: colour }), kind),
    ),
    item(swatch("fact staged"), "staged (thin border)"),
    item(swatch("fact confirmed"), "confirmed (thick border)"),
    item(swatch("fact dormant"), "dormant (dashed, pale)"),
    item(swatch("fact superseded"), "superseded (grey, dashed)"),
    item(swatch("fact retracted"), el("s", {}, "retracted"), " (faded)"),
    item(swatch("fact hit"), "search hit"),
    item(swatch("line supersedes"), "supersedes"),
    item(swatch("line contradicts"), "contradicts"),
    item(swatch("line relates"), "entity relation"),
    item(swatch("line about"), "fact is about entity"),
    item(swatch("line path"), "path between hits"),
  );
}

function wireTools() {
  byId("fit").addEventListener("click", () => {
    if (!state.cy) return;
    // Drop a running "centre on node" animation: letting it finish would undo the fit.
    state.cy.stop(true, false);
    state.cy.fit(undefined, 40);
  });
  byId("relayout").addEventListener("click", () => state.cy && runLayout());
  for (const tab of document.querySelectorAll("[data-view]")) {
    tab.addEventListener("click", () => showView(tab.dataset.view));
  }
}

async function start() {
  renderLegend();
  wireSearch();
  wireActions();
  wireTools();
  try {
    await setUpFilters(filtersChanged);
    await reload();
  } catch (err) {
    api.error = err.message;
    byId("summary").textContent = `Could not load the graph: ${err.message}`;
    byId("summary").classList.add("error");
  }
  api.loaded = true;
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
