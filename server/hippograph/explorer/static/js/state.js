// The page's shared state, and the few actions modules call on each other (set by main.js, so
// no module imports the one that imports it).

export const state = {
  cy: null, // the cytoscape instance
  graph: null, // the last /api/graph answer
  hits: [], // ids of the last search's results, best first
  selected: null, // id of the node shown in the panel
  view: "graph", // or "timeline"
  writable: true, // false when the explorer listens beyond loopback: no actions
  panelSeq: 0,
  searchSeq: 0,
  graphSeq: 0,
  layoutSeed: 0,
  filters: { scope: "global", kinds: new Set(), statuses: new Set() },
};

export const hooks = {
  // Show a node in the panel (and on the graph and timeline); centre it on the graph if asked.
  select: async (_id, _options) => {},
  // Fetch the graph again; keepPositions: leave the nodes that were drawn where they are.
  reload: async (_options) => {},
};
