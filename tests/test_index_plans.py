"""The graph index's reads find their rows through an index, in a view of one scope as in a view of
all: SQLite keeps no statistics of the index's columns, so a new index can change which one it
takes (an index on scope once made the trigger-tag read go through every fact of a scope: search
45 -> 103 ms at 100k facts). Each read's SQL is planned here (EXPLAIN QUERY PLAN): it may not scan
a table, nor look rows up by scope (a scope may hold every row)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from hippograph.domain.models import ACTIVE_STATUSES, EdgeType, Entity
from hippograph.store.graph import KuzuGraphStore
from hippograph.store.seam import EVERYWHERE, Relation
from testkit.facts import make_fact

T0 = datetime(2026, 2, 1, tzinfo=UTC)
SCOPES = ["global", "project:x"]
FACTS = [f"f_{i:016x}" for i in range(8)]
ENTITIES = [f"e_{i:016x}" for i in range(4)]
READS: dict[str, Callable[[Any], object]] = {
    "statuses": lambda v: v.statuses(FACTS),
    "fact_edges": lambda v: v.fact_edges(FACTS[:3]),
    "about_edges": lambda v: v.about_edges(FACTS[:3]),
    "about_any": lambda v: v.about_any(FACTS, ENTITIES[:2]),
    "centred_on_any": lambda v: v.centred_on_any(FACTS, ENTITIES[:2]),
    "facts_about": lambda v: v.facts_about(ENTITIES[0], limit=3, statuses=list(ACTIVE_STATUSES)),
    "related_entities": lambda v: v.related_entities(ENTITIES, limit=2),
    "tagged": lambda v: v.tagged("trigger:", list(ACTIVE_STATUSES)),
    "tag_neighbours": lambda v: v.tag_neighbours(FACTS[:3], limit=4),
    "entity_names_for": lambda v: v.entity_names_for(FACTS[:4]),
    "scopes": lambda v: v.scopes("", limit=10),
}


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> Any:
    store = KuzuGraphStore(Path(tmp_path_factory.mktemp("plans")) / "graph.kuzu", max_db_size=1 << 32)
    facts = [
        make_fact(f"note {i}", id=fid, at=T0 + timedelta(minutes=i), scope=SCOPES[i % 2])
        for i, fid in enumerate(FACTS)
    ]
    with store.transaction():
        store.insert_facts(facts)
        store.insert_entities(
            [
                Entity(id=eid, name=f"Name {i}", type="person", scope=SCOPES[i % 2])
                for i, eid in enumerate(ENTITIES)
            ]
        )
    store.link_about_many([(fid, ENTITIES[i % 4], "subject") for i, fid in enumerate(FACTS)])
    store.link_facts_many(EdgeType.NEXT.value, [(FACTS[i], FACTS[i + 2], T0, {}) for i in range(6)])
    store.link_entities_many([Relation(ENTITIES[0], ENTITIES[2], "uses", 0.5, FACTS[0], T0)])
    store.tag_facts([(FACTS[0], "ops"), (FACTS[2], "ops"), (FACTS[4], "trigger:force-push")])
    yield store
    store.close()


@pytest.mark.parametrize("scopes", [EVERYWHERE, ["global"]], ids=["every scope", "one scope"])
@pytest.mark.parametrize("read", list(READS))
def test_a_read_of_the_graph_index_scans_no_table_and_looks_up_no_scope(
    graph: Any, scopes: Any, read: str
) -> None:
    db = graph.read.db
    asked: list[str] = []
    db.set_trace_callback(asked.append)  # each statement as run, its parameters written in
    try:
        READS[read](graph.view(scopes))
    finally:
        db.set_trace_callback(None)
    queries = [q for q in asked if q.lstrip().upper().startswith(("SELECT", "WITH"))]
    assert queries, read
    for query in queries:
        plan = [str(row[-1]) for row in db.execute("EXPLAIN QUERY PLAN " + query)]
        # A table-valued id list (json_each), a constant row or a CTE's own rows may be scanned.
        scans = [p for p in plan if p.startswith("SCAN ") and not _ALLOWED.match(p)]
        assert not scans, (read, query, plan)
        # The indexes on scope serve the walk over scopes alone: a scope may hold every row.
        by_scope = [p for p in plan if re.search(r"\b(fact|entity)_scope\b", p)]
        assert read == "scopes" or not by_scope, (read, query, plan)


_ALLOWED = re.compile(r"SCAN (json_each|CONSTANT ROW|w\d+)\b")
