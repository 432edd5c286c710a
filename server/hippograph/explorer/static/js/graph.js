// The graph: cytoscape's style for facts, entities and edges, drawing /api/graph, and the
// highlights (a selected node's neighbourhood; search hits and the paths between them).

import { KIND_COLOURS, OTHER_KIND, byId, tint } from "./dom.js";
import { applyLabels, followZoom, initialLabelData, labelStyle, withFullLabels } from "./labels.js";
import { placeNewNodes, runLayout } from "./layout.js";
import { hooks, state } from "./state.js";

const ENTITY_FILL = "#3d4a5c";
const HISTORY_GREY = "#9aa0a6";
const HIT = "#f59e0b";
const LABEL_WRAP = 150;
const FACT_LINE = 1.25;
const FACT_PADDING = 8;
const FONT_FAMILY = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
// Paths between two search hits are highlighted up to this many edges (hit, entity, ..., hit).
const MAX_PATH_EDGES = 3;

function graphStyle() {
  const perKind = Object.entries(KIND_COLOURS).map(([kind, colour]) => ({
    selector: `node.fact[kind = "${kind}"]`,
    style: { "background-color": tint(colour, 0.8), "border-color": colour },
  }));
  // From afar a fact's short label stands in for its box: it wears the box's colours.
  const farPerKind = Object.entries(KIND_COLOURS).map(([kind, colour]) => ({
    selector: `node.fact.far[kind = "${kind}"]`,
    style: { "text-background-color": tint(colour, 0.85), "text-border-color": colour },
  }));
  return [
    { selector: "node", style: { "font-family": FONT_FAMILY } },
    {
      selector: "node.entity",
      style: {
        shape: "ellipse",
        width: 26,
        height: 26,
        "background-color": ENTITY_FILL,
        "border-width": 2,
        "border-color": "#ffffff",
        "font-weight": 600,
        color: "#1f2937",
        "text-valign": "bottom",
        "text-margin-y": 4,
        "text-outline-color": "#ffffff",
        "text-outline-width": 2.5,
        "z-index": 2, // names stay above the boxes around them
      },
    },
    {
      selector: "node.fact",
      style: {
        shape: "round-rectangle",
        width: "data(w)",
        height: "data(h)",
        "background-color": tint(OTHER_KIND, 0.8),
        "border-color": OTHER_KIND,
        "border-width": 1.5,
        "line-height": FACT_LINE,
        color: "#111827",
        "text-wrap": "wrap",
        "text-max-width": LABEL_WRAP,
        "text-valign": "center",
        "text-halign": "center",
        "z-index": 1,
      },
    },
    ...perKind,
    ...labelStyle, // after the box styles: a far fact's label overrides how they wrap text
    ...farPerKind,
    {
      selector: "node.fact.far.superseded, node.fact.far.retracted",
      style: { "text-background-color": "#f3f4f6", "text-border-color": HISTORY_GREY },
    },
    { selector: "node.fact.confirmed", style: { "border-width": 3.5 } },
    { selector: "node.fact.dormant", style: { "border-style": "dashed", opacity: 0.75 } },
    {
      selector: "node.fact.superseded",
      style: {
        "background-color": "#ececec",
        "border-color": HISTORY_GREY,
        "border-style": "dashed",
        "border-width": 2,
        color: "#5f6368",
      },
    },
    {
      selector: "node.fact.retracted",
      style: {
        "background-color": "#f5f5f5",
        "border-color": HISTORY_GREY,
        "border-style": "dotted",
        "border-width": 2,
        color: "#6b7280",
        opacity: 0.5,
      },
    },
    {
      selector: "edge",
      style: {
        width: 1.2,
        "line-color": "#c9ced6",
        "curve-style": "bezier",
        "font-size": 10,
        color: "#4b5563",
        "text-rotation": "autorotate",
        "text-background-color": "#ffffff",
        "text-background-opacity": 0.85,
        "text-background-padding": 1.5,
        "target-arrow-color": "#c9ced6",
        "arrow-scale": 0.8,
      },
    },
    {
      selector: "edge.supersedes",
      style: {
        label: "supersedes",
        width: 2,
        "line-color": "#6b7280",
        "target-arrow-color": "#6b7280",
        "target-arrow-shape": "triangle",
      },
    },
    {
      selector: "edge.contradicts",
      style: {
        label: "contradicts",
        width: 2,
        "line-color": "#d1495b",
        "target-arrow-color": "#d1495b",
        "line-style": "dashed",
        "target-arrow-shape": "tee",
      },
    },
    {
      selector: "edge.relates",
      style: {
        label: "data(label)",
        width: 2,
        "line-color": "#7d8aa0",
        "target-arrow-color": "#7d8aa0",
        "target-arrow-shape": "triangle",
      },
    },
    {
      selector: "edge.relates_to, edge.causes, edge.derived_from",
      style: {
        label: "data(label)",
        "target-arrow-shape": "triangle",
        "line-color": "#a3aab5",
      },
    },
    {
      selector: "edge.next",
      style: { "line-style": "dotted", "target-arrow-shape": "vee" },
    },
    { selector: ".faded", style: { opacity: 0.5 } },
    { selector: "node.retracted.faded", style: { opacity: 0.3 } },
    {
      selector: "node.hit",
      style: { "underlay-color": HIT, "underlay-padding": 6, "underlay-opacity": 0.55, "z-index": 3 },
    },
    { selector: "node.entity.path", style: { "background-color": "#b45309" } },
    {
      selector: "edge.path",
      style: { width: 3.5, "line-color": HIT, "target-arrow-color": HIT, opacity: 1, "z-index": 3 },
    },
    { selector: ".dim", style: { opacity: 0.22 } },
    {
      selector: "node:selected",
      style: {
        "underlay-color": "#facc15",
        "underlay-padding": 7,
        "underlay-opacity": 0.65,
      },
    },
  ];
}

// A fact box is its wrapped label plus padding, measured by cytoscape itself (its own
// `width: label` is deprecated and leaves the node's edges undrawn).
function fitBoxesToLabels(nodes) {
  withFullLabels(() => {
    state.cy.batch(() => {
      nodes.filter(".fact").forEach((node) => {
        const label = node.boundingBox({ includeNodes: false, includeEdges: false, includeLabels: true });
        node.data({ w: Math.ceil(label.w) + 2 * FACT_PADDING, h: Math.ceil(label.h) + 2 * FACT_PADDING });
      });
    });
  });
}

function toElements(graph) {
  const nodes = graph.nodes.map((n) => ({
    group: "nodes",
    data: { ...n, ...(n.group === "fact" ? { w: 1, h: 1 } : {}), ...initialLabelData(n) },
    classes: [n.group, n.status].filter(Boolean).join(" "),
  }));
  const edges = graph.edges.map((e) => ({ group: "edges", data: e, classes: e.type.toLowerCase() }));
  return [...nodes, ...edges];
}

function create() {
  const cy = window.cytoscape({
    container: byId("graph"),
    style: graphStyle(),
    layout: { name: "preset" },
    minZoom: 0.1,
    maxZoom: 3,
    wheelSensitivity: 0.3,
    selectionType: "single",
    boxSelectionEnabled: false,
  });
  cy.on("tap", "node", (event) => hooks.select(event.target.id()));
  cy.on("tap", (event) => {
    if (event.target === cy) clearSelection();
  });
  followZoom(cy);
  return cy;
}

// Draw `graph`. keepPositions: nodes drawn before stay where they were (after an action on one
// fact, the picture should not jump); otherwise everything is laid out afresh.
export function draw(graph, { keepPositions = false } = {}) {
  state.cy = state.cy || create();
  const cy = state.cy;
  const before = new Map(cy.nodes().map((n) => [n.id(), { ...n.position() }]));
  cy.batch(() => {
    cy.elements().remove();
    cy.add(toElements(graph));
  });
  fitBoxesToLabels(cy.nodes());
  const fresh = cy.nodes().filter((n) => !before.has(n.id()));
  if (keepPositions && before.size && fresh.length <= cy.nodes().length / 2) {
    cy.nodes().forEach((n) => {
      if (before.has(n.id())) n.position(before.get(n.id()));
    });
    placeNewNodes(fresh);
  } else {
    runLayout();
  }
  highlight(state.hits);
  applyLabels();
}

export function clearSelection() {
  state.cy.elements().removeClass("faded").unselect();
}

export function focusNode(node, centre) {
  const cy = state.cy;
  cy.elements().unselect();
  node.select();
  cy.elements().addClass("faded");
  node.closedNeighborhood().removeClass("faded");
  if (centre) cy.animate({ center: { eles: node }, zoom: Math.max(cy.zoom(), 1.1) }, { duration: 200 });
}

// Mark the drawn search hits, the entities they are about, the edges among those, and every
// path of at most MAX_PATH_EDGES edges between two hits; dim the rest. Returns the hits drawn.
export function highlight(ids) {
  const cy = state.cy;
  if (!cy) return 0;
  cy.elements().removeClass("hit path dim");
  const hits = cy.collection(ids.map((id) => cy.getElementById(id)).filter((n) => n.nonempty()));
  if (hits.nonempty()) {
    const entities = hits.neighborhood("node.entity");
    let lit = hits.union(entities).union(hits.union(entities).edgesWith(hits.union(entities)));
    const all = cy.elements();
    hits.forEach((a, i) => {
      hits.slice(i + 1).forEach((b) => {
        const found = all.aStar({ root: a, goal: b });
        if (found.found && found.distance <= MAX_PATH_EDGES) lit = lit.union(found.path);
      });
    });
    hits.addClass("hit");
    lit.difference(hits).addClass("path");
    all.difference(lit).addClass("dim");
  }
  applyLabels();
  return hits.length;
}
