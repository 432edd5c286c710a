// Copy the browser build of cytoscape (and its licence) into the Python package, so the
// explorer page works offline: nothing is fetched from a CDN at run time.
// Run from this directory: npm ci && npm run build
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const source = join(here, "node_modules", "cytoscape");
const target = join(here, "..", "server", "hippograph", "explorer", "static", "vendor");
const { version } = JSON.parse(readFileSync(join(source, "package.json"), "utf8"));

mkdirSync(target, { recursive: true });
copyFileSync(join(source, "dist", "cytoscape.min.js"), join(target, "cytoscape.min.js"));
copyFileSync(join(source, "LICENSE"), join(target, "cytoscape.LICENSE"));
console.log(`copied cytoscape ${version} to ${target}`);
