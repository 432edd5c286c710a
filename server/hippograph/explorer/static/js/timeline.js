// The timeline: the facts drawn, in the order things happened (a fact's event time, else the
// time memory was told), by day. It lies over the graph, which keeps its size and layout.

import { byId, el, kindBadge, statusBadge, when } from "./dom.js";
import { hooks, state } from "./state.js";

const moment = (fact) => fact.event_time || fact.created_at;
// The time of day under the day's heading; none for a date given without one (midnight UTC).
const timeOfDay = (iso) => {
  const time = when(iso).slice(11);
  return time.startsWith("00:00:00") ? "" : time;
};

function chronological(facts) {
  const at = (fact) => Date.parse(moment(fact));
  return [...facts].sort((a, b) => at(a) - at(b) || Date.parse(a.created_at) - Date.parse(b.created_at));
}

function item(fact) {
  const happened = Boolean(fact.event_time);
  return el(
    "li",
    {},
    el(
      "button",
      {
        type: "button",
        className: "tl-item",
        "data-testid": "timeline-item",
        "data-fact-id": fact.id,
        onClick: () => hooks.select(fact.id),
      },
      el(
        "span",
        { className: "meta" },
        el("time", { datetime: moment(fact) }, timeOfDay(moment(fact))),
        el(
          "span",
          { className: "tl-when", title: happened ? "when it happened" : "when memory was told" },
          happened ? "happened" : "recorded",
        ),
        kindBadge(fact.kind),
        statusBadge(fact.status),
      ),
      el("span", { className: `text status-${fact.status}` }, fact.content),
    ),
  );
}

export function renderTimeline() {
  const facts = chronological((state.graph ? state.graph.nodes : []).filter((n) => n.group === "fact"));
  const days = new Map();
  for (const fact of facts) {
    const day = moment(fact).slice(0, 10);
    if (!days.has(day)) days.set(day, []);
    days.get(day).push(fact);
  }
  byId("timeline-note").textContent = facts.length
    ? `${facts.length} fact${facts.length === 1 ? "" : "s"}, oldest first: by when they happened, else when memory was told.`
    : "No facts in view.";
  byId("timeline-list").replaceChildren(
    ...Array.from(days, ([day, those]) =>
      el(
        "li",
        { className: "tl-day" },
        el("h3", {}, day),
        el("ol", { className: "tl-facts" }, those.map(item)),
      ),
    ),
  );
  markTimelineHits();
  markTimelineSelected();
}

export function markTimelineHits() {
  const hits = new Set(state.hits);
  for (const button of byId("timeline-list").querySelectorAll(".tl-item")) {
    button.classList.toggle("hit", hits.has(button.dataset.factId));
  }
}

export function markTimelineSelected() {
  for (const button of byId("timeline-list").querySelectorAll(".tl-item")) {
    const chosen = button.dataset.factId === state.selected;
    button.classList.toggle("selected", chosen);
    if (chosen) button.setAttribute("aria-current", "true");
    else button.removeAttribute("aria-current");
  }
}

export function showView(view) {
  state.view = view;
  byId("timeline").hidden = view !== "timeline";
  for (const tab of document.querySelectorAll("[data-view]")) {
    tab.setAttribute("aria-selected", String(tab.dataset.view === view));
  }
  byId("graph-tools").hidden = view !== "graph";
}
