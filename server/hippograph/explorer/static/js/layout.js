// Where the nodes go: cytoscape's cose from a seeded scatter, the best of a few tries.

import { state } from "./state.js";
import { withFullLabels } from "./labels.js";

function layoutOptions() {
  // Strong repulsion keeps the wide fact boxes apart; gravity keeps components together.
  return {
    name: "cose",
    animate: false,
    randomize: false, // start from scatter(): the same store gives the same picture
    fit: false,
    nodeDimensionsIncludeLabels: true,
    idealEdgeLength: (edge) => (edge.hasClass("about") ? 50 : 80),
    edgeElasticity: () => 100,
    nodeRepulsion: () => 400000,
    nodeOverlap: 20,
    nestingFactor: 5,
    gravity: 120,
    componentSpacing: 80,
    numIter: 2000,
    initialTemp: 200,
    coolingFactor: 0.95,
    minTemp: 1.0,
  };
}

function scatter(seed) {
  let a = seed >>> 0; // mulberry32
  const random = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const side = Math.sqrt(state.cy.nodes().length) * 120;
  state.cy.nodes().positions(() => ({ x: random() * side, y: random() * side }));
}

function overlaps(boxes) {
  let count = 0;
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const p = boxes[i];
      const q = boxes[j];
      if (p.x1 < q.x2 && q.x1 < p.x2 && p.y1 < q.y2 && q.y1 < p.y2) count++;
    }
  }
  return count;
}

function crossings(segments) {
  const side = (a, b, c) => Math.sign((b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x));
  let count = 0;
  for (let i = 0; i < segments.length; i++) {
    for (let j = i + 1; j < segments.length; j++) {
      const [a, b, ids1] = segments[i];
      const [c, d, ids2] = segments[j];
      if (ids1.some((id) => ids2.includes(id))) continue; // edges meeting at a node
      if (side(a, b, c) * side(a, b, d) < 0 && side(c, d, a) * side(c, d, b) < 0) count++;
    }
  }
  return count;
}

// Lower is better: stacked boxes are the worst, then crossing edges, then a shape unlike the view's.
function layoutScore(positions) {
  const cy = state.cy;
  const nodes = cy.nodes();
  const at = new Map(nodes.map((n, i) => [n.id(), positions[i]]));
  const boxes = nodes.map((n, i) => {
    const { w, h } = n.boundingBox({ includeLabels: true });
    const { x, y } = positions[i];
    return { x1: x - w / 2, x2: x + w / 2, y1: y - h / 2, y2: y + h / 2 };
  });
  const segments = cy
    .edges()
    .map((e) => [at.get(e.source().id()), at.get(e.target().id()), [e.source().id(), e.target().id()]]);
  const xs = boxes.flatMap((b) => [b.x1, b.x2]);
  const ys = boxes.flatMap((b) => [b.y1, b.y2]);
  const shape = (Math.max(...xs) - Math.min(...xs)) / Math.max(1, Math.max(...ys) - Math.min(...ys));
  const view = cy.width() / Math.max(1, cy.height());
  return 20 * overlaps(boxes) + crossings(segments) + 3 * Math.abs(Math.log(shape / view));
}

// cose from a seeded scatter. A small graph gets a few tries, each also turned a quarter,
// and keeps the best (cose alone sometimes stacks two boxes or crosses edges it need not).
// Boxes are measured with their full labels, whatever the zoom shows now.
export function runLayout() {
  const cy = state.cy;
  if (cy.nodes().empty()) return;
  withFullLabels(() => {
    const tries = cy.nodes().length <= 150 ? 4 : 1;
    let best = null;
    for (let attempt = 0; attempt < tries; attempt++) {
      scatter(++state.layoutSeed);
      cy.layout(layoutOptions()).run(); // synchronous: animate is false
      const upright = cy.nodes().map((n) => ({ ...n.position() }));
      const turned = upright.map(({ x, y }) => ({ x: y, y: -x }));
      for (const positions of tries > 1 ? [upright, turned] : [upright]) {
        const score = tries > 1 ? layoutScore(positions) : 0;
        if (!best || score < best.score) best = { score, positions };
      }
    }
    cy.nodes().forEach((node, i) => {
      node.position(best.positions[i]);
    });
  });
  cy.fit(undefined, 30);
}

// Place nodes that were not drawn before next to those they link to (or in the middle of the
// view), leaving every other node where the reader saw it.
export function placeNewNodes(fresh) {
  const cy = state.cy;
  const extent = cy.extent();
  fresh.forEach((node, i) => {
    const placed = node.neighborhood("node").filter((n) => !fresh.contains(n));
    const around = placed.nonempty()
      ? placed.boundingBox()
      : { x1: extent.x1, x2: extent.x2, y1: extent.y1, y2: extent.y2 };
    const angle = (i + 1) * 2.4; // golden angle: new neighbours fan out instead of stacking
    node.position({
      x: (around.x1 + around.x2) / 2 + 120 * Math.cos(angle),
      y: (around.y1 + around.y2) / 2 + 120 * Math.sin(angle),
    });
  });
}
