// Small DOM and HTTP helpers shared by the page's modules. Every piece of memory content is
// inserted as text (never as HTML).

// Okabe–Ito: distinguishable with the common colour-vision deficiencies.
export const KIND_COLOURS = {
  fact: "#0072B2",
  preference: "#E69F00",
  procedure: "#009E73",
  decision: "#CC79A7",
  correction: "#D55E00",
  negative: "#882255",
  episode: "#56B4E9",
};
export const KINDS = Object.keys(KIND_COLOURS);
// Every status a fact can be drawn with (a purged fact has nothing left to draw).
export const STATUSES = ["staged", "confirmed", "dormant", "superseded", "retracted"];
export const ACTIVE = ["staged", "confirmed", "dormant"];
export const OTHER_KIND = "#6b7280";

// The header every write carries: a page of another site cannot send it (see actions.py).
const WRITE_HEADER = "X-Hippograph-Explorer";

export const byId = (id) => document.getElementById(id);

export function el(tag, attrs, ...children) {
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

async function answered(response) {
  let body;
  try {
    body = await response.json();
  } catch {
    body = {};
  }
  if (!response.ok) throw new Error(body.error || `the server answered ${response.status}`);
  return body;
}

export async function getJSON(url) {
  return answered(await fetch(url, { headers: { Accept: "application/json" } }));
}

export async function postJSON(url, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: { Accept: "application/json", "Content-Type": "application/json", [WRITE_HEADER]: "1" },
    body: JSON.stringify(body),
  });
  return answered(response);
}

export const kindColour = (kind) => KIND_COLOURS[kind] || OTHER_KIND;

export function tint(hex, amount) {
  const channels = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  const mixed = channels.map((c) => Math.round(c + (255 - c) * amount));
  return `#${mixed.map((c) => c.toString(16).padStart(2, "0")).join("")}`;
}

export const shorten = (text, n) => (text.length <= n ? text : `${text.slice(0, n - 1).trimEnd()}…`);
export const number = (value, digits = 3) => (typeof value === "number" ? value.toFixed(digits) : "—");
export const when = (iso) =>
  iso ? iso.replace("T", " ").replace(/\.\d+/, "").replace("Z", " UTC").replace("+00:00", " UTC") : "—";

export const accessed = (count, last) =>
  `${count} time${count === 1 ? "" : "s"}` + (last ? `, last ${when(last)}` : "");

export function statusBadge(status, testid) {
  return el("span", { className: `badge status-${status}`, "data-testid": testid }, status);
}

export function kindBadge(kind) {
  return el(
    "span",
    {
      className: "badge kind",
      style: { borderColor: kindColour(kind), background: tint(kindColour(kind), 0.82) },
    },
    kind,
  );
}

// Announce the outcome of an action where screen readers hear it (the summary line is a live region).
export function announce(text, isError = false) {
  const line = byId("notice");
  line.textContent = text;
  line.classList.toggle("error", isError);
}
