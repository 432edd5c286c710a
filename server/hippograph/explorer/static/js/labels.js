// Labels readable at every zoom. Entity names are always drawn, at a constant size on screen.
// Close up, a fact box shows its wrapped text; farther out (where that text would be too small
// to read) it shows its first few words at a readable size instead, and at the farthest zooms
// only entities and search hits keep a label. Sizes are node data (`fs`, `shown`), set here
// whenever the zoom moves by a step, so cytoscape re-styles only then.

import { state } from "./state.js";

const ENTITY_PX = 13; // on screen, at any zoom
const FACT_PX = 12; // inside the box, from NEAR_ZOOM on
const FAR_FACT_PX = 11; // on screen, below NEAR_ZOOM
export const NEAR_ZOOM = 0.75; // FACT_PX x 0.75 = 9 px: the smallest a box's own text is drawn
const FACT_LABEL_MIN_ZOOM = 0.3; // below: only entities and search hits are labelled
const STEP = Math.log(1.1); // labels are re-sized when the zoom has moved by 10%
const SHORT_CHARS = 24;

const mode = { full: false, key: null, frame: 0 };
const STRIKE = "\u0336"; // combining long stroke: canvas labels have no text-decoration

export const struck = (text) => Array.from(text, (ch) => ch + STRIKE).join("");

// The first words of a fact, at most SHORT_CHARS: what a box says from afar.
export function shortLabel(text) {
  const words = text.split(/\s+/).filter(Boolean);
  let short = "";
  for (const word of words) {
    const next = short ? `${short} ${word}` : word;
    if (next.length > SHORT_CHARS) return `${short || word.slice(0, SHORT_CHARS - 1)}…`;
    short = next;
  }
  return short;
}

// The node data the label style reads, for a zoom of 1 (before any zoom is known).
export function initialLabelData(node) {
  if (node.group === "entity") return { shown: node.label, fs: ENTITY_PX };
  const display = node.status === "retracted" ? struck(node.label) : node.label;
  const short = shortLabel(node.label);
  return { display, short: node.status === "retracted" ? struck(short) : short, shown: display, fs: FACT_PX };
}

export const labelStyle = [
  { selector: "node", style: { label: "data(shown)", "font-size": "data(fs)", "min-zoomed-font-size": 0 } },
  {
    selector: "node.fact.far",
    style: {
      "text-wrap": "none",
      "text-background-color": "#ffffff",
      "text-background-opacity": 0.95,
      "text-background-padding": 3,
      "text-background-shape": "round-rectangle",
      "text-border-width": 1,
      "text-border-opacity": 1,
      "text-border-color": "#9ca3af",
    },
  },
];

export function applyLabels() {
  const cy = state.cy;
  if (!cy) return;
  const zoom = mode.full ? 1 : cy.zoom();
  const far = zoom < NEAR_ZOOM;
  cy.batch(() => {
    cy.nodes(".entity").data("fs", ENTITY_PX / Math.min(1, zoom));
    cy.nodes(".fact").forEach((node) => {
      node.toggleClass("far", far);
      const hidden = zoom < FACT_LABEL_MIN_ZOOM && !node.hasClass("hit");
      node.data({
        fs: far ? FAR_FACT_PX / zoom : FACT_PX,
        shown: !far ? node.data("display") : hidden ? "" : node.data("short"),
      });
    });
  });
}

// Run `job` (measuring or laying out boxes) with every fact showing its full text.
export function withFullLabels(job) {
  mode.full = true;
  applyLabels();
  try {
    return job();
  } finally {
    mode.full = false;
    mode.key = null;
    applyLabels();
  }
}

// Re-size labels once per animation frame, and only when the zoom crossed a step.
export function followZoom(cy) {
  cy.on("zoom", () => {
    const zoom = cy.zoom();
    const key = `${Math.round(Math.log(zoom) / STEP)}${zoom < NEAR_ZOOM ? "f" : "n"}`;
    if (key === mode.key || mode.frame) return;
    mode.frame = requestAnimationFrame(() => {
      mode.frame = 0;
      mode.key = `${Math.round(Math.log(cy.zoom()) / STEP)}${cy.zoom() < NEAR_ZOOM ? "f" : "n"}`;
      applyLabels();
    });
  });
}
