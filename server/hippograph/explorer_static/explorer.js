// hippograph explorer: draws /api/graph with cytoscape, searches with /api/search and
// explains a fact with /api/fact/{id}. Plain DOM, no framework; every piece of memory
// content is inserted as text (never as HTML).
"use strict";

(() => {
  // Okabe–Ito: distinguishable with the common colour-vision deficiencies.
  const KIND_COLOURS = {
    fact: "#0072B2",
    preference: "#E69F00",
    procedure: "#009E73",
    decision: "#CC79A7",
    correction: "#D55E00",
    negative: "#882255",
    episode: "#56B4E9",
  };
  const OTHER_KIND = "#6b7280";
  const ENTITY_FILL = "#3d4a5c";
  const HISTORY_GREY = "#9aa0a6";
  const STRIKE = "\u0336"; // combining long stroke: canvas labels have no text-decoration
  // The page shows what a caller in one scope sees (it and global): /?scope=project:apollo.
  const PAGE_SCOPE = new URLSearchParams(window.location.search).get("scope");
  const SCOPE_PARAM = PAGE_SCOPE ? `scope=${encodeURIComponent(PAGE_SCOPE)}` : "";
  const LABEL_WRAP = 150;
  const FACT_FONT_PX = 12;
  const FACT_LINE = 1.25;
  const FACT_PADDING = 8;
  const FONT_FAMILY = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";

  const state = {
    cy: null,
    searchSeq: 0,
    panelSeq: 0,
    debounce: 0,
    layoutSeed: 0,
  };
  const api = { loaded: false, error: null, select, search: runSearch };
  Object.defineProperty(api, "cy", { get: () => state.cy });
  window.hippographExplorer = api;

  // ------------------------------------------------------------------ helpers

  const byId = (id) => document.getElementById(id);

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "className") node.className = value;
      else if (key === "onClick") node.addEventListener("click", value);
      else if (key === "style") Object.assign(node.style, value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === undefined || child === null || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  async function getJSON(url) {
    const response = await fetch(url, {
      headers: { Accept: "application/json" },
    });
    let body;
    try {
      body = await response.json();
    } catch {
      body = {};
    }
    if (!response.ok) throw new Error(body.error || `the server answered ${response.status}`);
    return body;
  }

  const kindColour = (kind) => KIND_COLOURS[kind] || OTHER_KIND;

  function tint(hex, amount) {
    const channels = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
    const mixed = channels.map((c) => Math.round(c + (255 - c) * amount));
    return `#${mixed.map((c) => c.toString(16).padStart(2, "0")).join("")}`;
  }

  const struck = (text) => Array.from(text, (ch) => ch + STRIKE).join("");
  const shorten = (text, n) => (text.length <= n ? text : `${text.slice(0, n - 1).trimEnd()}…`);
  const number = (value, digits = 3) => (typeof value === "number" ? value.toFixed(digits) : "—");
  const when = (iso) => (iso ? iso.replace("T", " ").replace(/\.\d+/, "").replace("Z", " UTC") : "—");

  const accessed = (count, last) =>
    `${count} time${count === 1 ? "" : "s"}` + (last ? `, last ${when(last)}` : "");

  function statusBadge(status, testid) {
    return el("span", { className: `badge status-${status}`, "data-testid": testid }, status);
  }

  function kindBadge(kind) {
    return el(
      "span",
      {
        className: "badge kind",
        style: {
          borderColor: kindColour(kind),
          background: tint(kindColour(kind), 0.82),
        },
      },
      kind,
    );
  }

  // ------------------------------------------------------------------ the graph

  function graphStyle() {
    const perKind = Object.entries(KIND_COLOURS).map(([kind, colour]) => ({
      selector: `node.fact[kind = "${kind}"]`,
      style: { "background-color": tint(colour, 0.8), "border-color": colour },
    }));
    return [
      {
        selector: "node",
        style: {
          label: "data(display)",
          "font-family": FONT_FAMILY,
          "min-zoomed-font-size": 7,
        },
      },
      {
        selector: "node.entity",
        style: {
          shape: "ellipse",
          width: 26,
          height: 26,
          "background-color": ENTITY_FILL,
          "border-width": 2,
          "border-color": "#ffffff",
          "font-size": 13,
          "font-weight": 600,
          color: "#1f2937",
          "text-valign": "bottom",
          "text-margin-y": 4,
          "text-outline-color": "#ffffff",
          "text-outline-width": 2.5,
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
          "font-size": FACT_FONT_PX,
          "line-height": FACT_LINE,
          color: "#111827",
          "text-wrap": "wrap",
          "text-max-width": LABEL_WRAP,
          "text-valign": "center",
          "text-halign": "center",
        },
      },
      ...perKind,
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
  function fitBoxesToLabels() {
    state.cy.batch(() => {
      state.cy.nodes(".fact").forEach((node) => {
        const label = node.boundingBox({
          includeNodes: false,
          includeEdges: false,
          includeLabels: true,
        });
        node.data({
          w: Math.ceil(label.w) + 2 * FACT_PADDING,
          h: Math.ceil(label.h) + 2 * FACT_PADDING,
        });
      });
    });
  }

  function toElements(graph) {
    const nodes = graph.nodes.map((n) => ({
      group: "nodes",
      data: {
        ...n,
        ...(n.group === "fact" ? { w: 1, h: 1 } : {}),
        display: n.status === "retracted" ? struck(n.label) : n.label,
      },
      classes: [n.group, n.status].filter(Boolean).join(" "),
    }));
    const edges = graph.edges.map((e) => ({
      group: "edges",
      data: e,
      classes: e.type.toLowerCase(),
    }));
    return [...nodes, ...edges];
  }

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
  function runLayout() {
    const cy = state.cy;
    if (cy.nodes().empty()) return;
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
    cy.fit(undefined, 30);
  }

  function renderSummary(graph) {
    const entities = graph.nodes.filter((n) => n.group === "entity").length;
    const shown = graph.facts_shown;
    const facts =
      shown === graph.facts_total
        ? `${shown} facts`
        : `the ${shown} most recent of ${graph.facts_total} facts`;
    byId("summary").textContent = `Showing ${facts} and ${entities} entities.`;
  }

  async function loadGraph() {
    const graph = await getJSON(SCOPE_PARAM ? `/api/graph?${SCOPE_PARAM}` : "/api/graph");
    state.cy = window.cytoscape({
      container: byId("graph"),
      elements: toElements(graph),
      style: graphStyle(),
      layout: { name: "preset" },
      minZoom: 0.15,
      maxZoom: 3,
      wheelSensitivity: 0.3,
      selectionType: "single",
      boxSelectionEnabled: false,
    });
    fitBoxesToLabels();
    state.cy.on("tap", "node", (event) => select(event.target.id()));
    state.cy.on("tap", (event) => {
      if (event.target === state.cy) clearSelection();
    });
    runLayout();
    renderSummary(graph);
    if (graph.nodes.length === 0) byId("summary").textContent = "Memory is empty: nothing to draw yet.";
  }

  // ------------------------------------------------------------------ selection

  function clearSelection() {
    state.cy.elements().removeClass("faded").unselect();
  }

  function focusNode(node, centre) {
    const cy = state.cy;
    cy.elements().unselect();
    node.select();
    cy.elements().addClass("faded");
    node.closedNeighborhood().removeClass("faded");
    if (centre) cy.animate({ center: { eles: node }, zoom: Math.max(cy.zoom(), 1.1) }, { duration: 200 });
  }

  function select(id, options = {}) {
    const node = state.cy ? state.cy.getElementById(id) : null;
    const inView = Boolean(node && node.nonempty());
    if (inView) focusNode(node, Boolean(options.centre));
    if (!id.startsWith("e_")) return showFact(id, inView);
    if (inView) renderEntity(node);
    else
      setPanel(
        "Entity",
        el("p", { className: "note" }, "Not drawn: no fact in the current view is about it."),
      );
    return Promise.resolve();
  }

  // ------------------------------------------------------------------ the side panel

  function setPanel(heading, ...children) {
    byId("panel-heading").textContent = heading;
    byId("panel-body").replaceChildren(...children.filter(Boolean));
  }

  function nodeButton(id, text, extra) {
    return el(
      "button",
      {
        type: "button",
        className: "link",
        "data-node-id": id,
        onClick: () => select(id, { centre: true }),
      },
      text,
      extra,
    );
  }

  function nodeName(id) {
    const node = state.cy && state.cy.getElementById(id);
    return node && node.nonempty()
      ? shorten(node.data("content") || node.data("label"), 70)
      : el("code", {}, id);
  }

  function linkedFactList(title, items, testid) {
    if (!items.length) return null;
    return el(
      "section",
      { "data-testid": testid },
      el("h3", {}, title),
      el(
        "ul",
        { className: "links" },
        items.map((f) =>
          el(
            "li",
            {},
            nodeButton(
              f.id,
              el("span", { className: `text status-${f.status}` }, shorten(f.content, 90)),
              el(
                "span",
                { className: "meta" },
                statusBadge(f.status),
                f.hops ? ` ${f.hops} hop${f.hops > 1 ? "s" : ""}` : "",
              ),
            ),
          ),
        ),
      ),
    );
  }

  function facts(rows) {
    return el(
      "dl",
      { className: "facts" },
      rows
        .filter(([, v]) => v !== null && v !== undefined && v !== "")
        .map(([k, v, testid]) => [el("dt", {}, k), el("dd", { "data-testid": testid }, v)]),
    );
  }

  async function showFact(id, inView) {
    const seq = ++state.panelSeq;
    setPanel("Fact", el("p", { className: "muted" }, "Loading…"));
    let x;
    try {
      x = await getJSON(`/api/fact/${encodeURIComponent(id)}${SCOPE_PARAM ? `?${SCOPE_PARAM}` : ""}`);
    } catch (err) {
      if (seq === state.panelSeq)
        setPanel("Fact", el("p", { className: "error", role: "alert" }, err.message));
      return;
    }
    if (seq !== state.panelSeq) return;
    const f = x.fact;
    const r = x.relevance;
    const terms = el(
      "table",
      { className: "terms", "data-testid": "panel-relevance-terms" },
      el("caption", {}, "relevance = confidence × source weight × decay"),
      el(
        "tbody",
        {},
        [
          ["confidence", r.confidence],
          ["source weight", r.source_weight],
          ["decay", r.decay],
          ["status weight (in search)", r.status_weight],
        ].map(([k, v]) => el("tr", {}, el("th", { scope: "row" }, k), el("td", {}, number(v)))),
      ),
    );
    setPanel(
      "Fact",
      el("div", { className: "badges" }, kindBadge(f.kind), statusBadge(f.status, "panel-status")),
      inView
        ? null
        : el("p", { className: "note" }, "Not drawn: it is older than the facts in the current view."),
      el(
        "blockquote",
        {
          className: `content status-${f.status}`,
          "data-testid": "panel-content",
        },
        f.content,
      ),
      facts([
        ["Status", f.status + (x.status_reason ? ` — ${x.status_reason}` : ""), "panel-status-text"],
        ["Relevance", number(r.value), "panel-relevance"],
      ]),
      terms,
      facts([
        ["Source", `${f.source} (${x.provenance})`],
        ["Scope", f.scope],
        ["Tags", f.tags.join(", ")],
        ["Created", when(f.created_at)],
        ["Happened", f.event_time ? when(f.event_time) : null],
        ["Valid until", f.valid_until ? when(f.valid_until) : null],
        ["Used", accessed(x.access_count, x.last_accessed)],
        ["Lifetime", `${x.ttl_policy}${x.pinned ? ", pinned" : ""}`],
        ["Evidence", x.evidence],
        ["Id", el("code", {}, f.id)],
      ]),
      x.entities.length
        ? el(
            "section",
            { "data-testid": "panel-entities" },
            el("h3", {}, "Entities"),
            el(
              "ul",
              { className: "links" },
              x.entities.map((e) =>
                el(
                  "li",
                  {},
                  nodeButton(
                    e.id,
                    el("span", { className: "text" }, e.name),
                    el("span", { className: "meta" }, `${e.type} · ${e.role}`),
                  ),
                ),
              ),
            ),
          )
        : null,
      linkedFactList("Supersedes (older versions)", x.supersedes, "panel-supersedes"),
      linkedFactList("Superseded by (newer versions)", x.superseded_by, "panel-superseded-by"),
      linkedFactList("Contradicts", x.contradicts, "panel-contradicts"),
      x.edges.length
        ? el(
            "section",
            { "data-testid": "panel-edges" },
            el("h3", {}, "Edges"),
            el(
              "ul",
              { className: "links" },
              x.edges.map((e) =>
                el(
                  "li",
                  {},
                  nodeButton(
                    e.other_id,
                    el(
                      "span",
                      { className: "text" },
                      `${e.direction === "out" ? "→" : "←"} ${e.type.toLowerCase().replace("_", " ")}`,
                    ),
                    el("span", { className: "meta" }, nodeName(e.other_id)),
                  ),
                ),
              ),
            ),
          )
        : null,
    );
  }

  function renderEntity(node) {
    state.panelSeq++;
    const d = node.data();
    const about = node
      .neighborhood("node.fact")
      .sort((a, b) => (a.data("created_at") < b.data("created_at") ? 1 : -1));
    const related = node.connectedEdges("edge.relates");
    setPanel(
      "Entity",
      el("div", { className: "badges" }, el("span", { className: "badge entity" }, d.type)),
      el("p", { className: "entity-name", "data-testid": "panel-content" }, d.label),
      facts([
        ["Mentions", String(d.mention_count)],
        ["Aliases", (d.aliases || []).join(", ")],
        ["Summary", d.summary],
        ["Id", el("code", {}, d.id)],
      ]),
      related.length
        ? el(
            "section",
            {},
            el("h3", {}, "Related entities"),
            el(
              "ul",
              { className: "links" },
              related.map((edge) => {
                const other = edge.source().id() === d.id ? edge.target() : edge.source();
                const arrow = edge.source().id() === d.id ? "→" : "←";
                return el(
                  "li",
                  {},
                  nodeButton(
                    other.id(),
                    el("span", { className: "text" }, other.data("label")),
                    el("span", { className: "meta" }, `${arrow} ${edge.data("label")}`),
                  ),
                );
              }),
            ),
          )
        : null,
      el(
        "section",
        { "data-testid": "panel-entity-facts" },
        el("h3", {}, `Facts about ${d.label} in view`),
        el(
          "ul",
          { className: "links" },
          about.map((f) =>
            el(
              "li",
              {},
              nodeButton(
                f.id(),
                el("span", { className: `text status-${f.data("status")}` }, shorten(f.data("content"), 90)),
                el("span", { className: "meta" }, statusBadge(f.data("status"))),
              ),
            ),
          ),
        ),
      ),
    );
  }

  // ------------------------------------------------------------------ search

  async function runSearch() {
    const query = byId("search-input").value.trim();
    const list = byId("results");
    const note = byId("results-note");
    const seq = ++state.searchSeq;
    if (!query) {
      list.replaceChildren();
      note.textContent = "Search to list matching facts.";
      return;
    }
    const history = byId("search-history").checked ? "&history=1" : "";
    note.textContent = "Searching…";
    let found;
    try {
      const scope = SCOPE_PARAM ? `&${SCOPE_PARAM}` : "";
      found = await getJSON(`/api/search?q=${encodeURIComponent(query)}${history}${scope}`);
    } catch (err) {
      if (seq === state.searchSeq) {
        list.replaceChildren();
        note.textContent = err.message;
      }
      return;
    }
    if (seq !== state.searchSeq) return;
    const hits = found.results;
    note.textContent = hits.length
      ? `${hits.length} fact${hits.length === 1 ? "" : "s"} match.`
      : "No facts match.";
    list.replaceChildren(
      ...hits.map((hit) =>
        el(
          "li",
          {},
          el(
            "button",
            {
              type: "button",
              className: "result",
              "data-testid": "search-result",
              "data-fact-id": hit.id,
              onClick: () => select(hit.id, { centre: true }),
            },
            el("span", { className: `text status-${hit.status}` }, hit.content),
            el(
              "span",
              { className: "meta" },
              kindBadge(hit.kind),
              statusBadge(hit.status),
              ` score ${number(hit.score)}`,
            ),
          ),
        ),
      ),
    );
  }

  function moveFocus(step) {
    const buttons = Array.from(byId("results").querySelectorAll("button.result"));
    if (!buttons.length) return;
    const at = buttons.indexOf(document.activeElement);
    const next = at === -1 ? 0 : Math.min(Math.max(at + step, 0), buttons.length - 1);
    buttons[next].focus();
  }

  function wireSearch() {
    byId("search-form").addEventListener("submit", (event) => {
      event.preventDefault();
      clearTimeout(state.debounce);
      runSearch();
    });
    byId("search-input").addEventListener("input", () => {
      clearTimeout(state.debounce);
      state.debounce = setTimeout(runSearch, 300);
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

  // ------------------------------------------------------------------ legend

  function renderLegend() {
    const swatch = (className, style) =>
      el("span", {
        className: `swatch ${className}`,
        style,
        "aria-hidden": "true",
      });
    const item = (s, ...text) => el("li", {}, s, el("span", {}, ...text));
    byId("legend").replaceChildren(
      item(swatch("entity"), "entity"),
      ...Object.entries(KIND_COLOURS).map(([kind, colour]) =>
        item(
          swatch("fact", {
            background: tint(colour, 0.8),
            borderColor: colour,
          }),
          kind,
        ),
      ),
      item(swatch("fact staged"), "staged (thin border)"),
      item(swatch("fact confirmed"), "confirmed (thick border)"),
      item(swatch("fact dormant"), "dormant (dashed, pale)"),
      item(swatch("fact superseded"), "superseded (grey, dashed)"),
      item(swatch("fact retracted"), el("s", {}, "retracted"), " (faded)"),
      item(swatch("line supersedes"), "supersedes"),
      item(swatch("line contradicts"), "contradicts"),
      item(swatch("line relates"), "entity relation"),
      item(swatch("line about"), "fact is about entity"),
    );
  }

  // ------------------------------------------------------------------ start

  async function start() {
    renderLegend();
    wireSearch();
    byId("fit").addEventListener("click", () => {
      if (!state.cy) return;
      // Drop a running "centre on node" animation: letting it finish would undo the fit.
      state.cy.stop(true, false);
      state.cy.fit(undefined, 40);
    });
    byId("relayout").addEventListener("click", () => state.cy && runLayout());
    try {
      await loadGraph();
    } catch (err) {
      api.error = err.message;
      byId("summary").textContent = `Could not load the graph: ${err.message}`;
      byId("summary").classList.add("error");
    }
    api.loaded = true;
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
