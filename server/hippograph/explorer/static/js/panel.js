// The side panel: a fact explained (/api/fact/{id}) with its actions, or an entity as drawn.

import { accessed, byId, el, getJSON, kindBadge, number, shorten, statusBadge, when } from "./dom.js";
import { factActions } from "./actions.js";
import { hooks, state } from "./state.js";

export function setPanel(heading, ...children) {
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
      onClick: () => hooks.select(id, { centre: true }),
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

export async function showFact(id, inView) {
  const seq = ++state.panelSeq;
  setPanel("Fact", el("p", { className: "muted" }, "Loading…"));
  let x;
  try {
    x = await getJSON(`/api/fact/${encodeURIComponent(id)}?${new URLSearchParams({ scope: state.filters.scope })}`);
  } catch (err) {
    if (seq === state.panelSeq) setPanel("Fact", el("p", { className: "error", role: "alert" }, err.message));
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
    factActions(f),
    f.status === "purged"
      ? el(
          "p",
          { className: "note", "data-testid": "panel-erased" },
          "Erased: no file of memory keeps its text; this empty tombstone only keeps its place in chains.",
        )
      : null,
    inView
      ? null
      : el(
          "p",
          { className: "note" },
          "Not drawn: it is outside the current view (older than the facts drawn, or filtered out).",
        ),
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

export function renderEntity(node) {
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
