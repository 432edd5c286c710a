"""The graph index's SQLite schema: its tables, their indexes, and what a comparison reads."""

from __future__ import annotations

from hippograph.store import entity_table

# The file's layout (PRAGMA user_version): a file of another layout is made afresh, and built.
FORMAT = 3

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS fact(
    id TEXT PRIMARY KEY, scope TEXT NOT NULL, status TEXT NOT NULL, created INTEGER NOT NULL,
    claim TEXT, session TEXT) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS link(seq INTEGER PRIMARY KEY, type TEXT NOT NULL, src TEXT NOT NULL,
    dst TEXT NOT NULL, at INTEGER, props TEXT);
CREATE TABLE IF NOT EXISTS about(fact TEXT NOT NULL, entity TEXT NOT NULL, role TEXT NOT NULL,
    created INTEGER NOT NULL, pos INTEGER NOT NULL, PRIMARY KEY(fact, entity, role)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS relates(seq INTEGER PRIMARY KEY, src TEXT NOT NULL, dst TEXT NOT NULL,
    predicate TEXT, weight REAL, fact_id TEXT, at INTEGER);
CREATE TABLE IF NOT EXISTS neighbour(a TEXT NOT NULL, b TEXT NOT NULL, w REAL NOT NULL,
    PRIMARY KEY(a, b)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tag(seq INTEGER PRIMARY KEY, fact TEXT NOT NULL, tag TEXT NOT NULL,
    UNIQUE(fact, tag));
"""
SCHEMA += entity_table.SCHEMA
# Made after the rows when the index is built from the graph (row by row: ~3x slower).
INDEXES = """
CREATE INDEX IF NOT EXISTS fact_claim ON fact(claim, created, id) WHERE claim IS NOT NULL;
CREATE INDEX IF NOT EXISTS fact_session ON fact(scope, session, created, id) WHERE session IS NOT NULL;
CREATE INDEX IF NOT EXISTS link_src ON link(src);
CREATE INDEX IF NOT EXISTS link_dst ON link(dst);
CREATE INDEX IF NOT EXISTS about_entity ON about(entity, created);
CREATE INDEX IF NOT EXISTS relates_src ON relates(src);
CREATE INDEX IF NOT EXISTS relates_dst ON relates(dst);
CREATE INDEX IF NOT EXISTS relates_fact ON relates(fact_id) WHERE fact_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS neighbour_rank ON neighbour(a, w, b);
CREATE INDEX IF NOT EXISTS tag_tag ON tag(tag);
CREATE INDEX IF NOT EXISTS fact_scope ON fact(scope);
CREATE INDEX IF NOT EXISTS entity_scope ON entity(scope);
"""
INDEXES += entity_table.INDEXES
TABLES = ("fact", "link", "about", "relates", "neighbour", "tag", *entity_table.TABLES)
# neighbour: each entity's related entities and the strongest RELATES weight between them, either
# way (the walk asks for an entity's strongest few: an index range, not a sort of a hub's edges),
# a weight as the walk uses it (1 if unset, clamped to 0..1).
WALK_WEIGHT = "COALESCE(MIN(MAX({w}, 0.0), 1.0), 1.0)"
NEIGHBOURS_OF = f"""
INSERT OR REPLACE INTO neighbour SELECT a, b, MAX({WALK_WEIGHT.format(w="w")}) FROM (
    SELECT src AS a, dst AS b, weight AS w FROM relates WHERE {{where}}
    UNION ALL SELECT dst, src, weight FROM relates WHERE {{where}}) GROUP BY a, b
"""

# What ``differences`` and ``snapshot`` compare, by part (order-free: rows as made may differ in seq).
PARTS = {
    "facts": "SELECT id, scope, status, created FROM {db}.fact",
    "claims": "SELECT id, claim FROM {db}.fact WHERE claim IS NOT NULL",
    "sessions": "SELECT id, scope, session FROM {db}.fact WHERE session IS NOT NULL",
    **entity_table.PARTS,
    "fact_edges": "SELECT type, src, dst, at, props FROM {db}.link",
    "about": "SELECT fact, entity, role FROM {db}.about",
    "relates": "SELECT src, dst, predicate, weight, fact_id, at FROM {db}.relates",
    "neighbours": "SELECT a, b, w FROM {db}.neighbour",
    "tags": "SELECT fact, tag FROM {db}.tag",
}
